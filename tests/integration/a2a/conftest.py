"""One real ``plait serve`` serving graphs over A2A, and a2a-sdk clients pointed at it."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.client.client import Client

from tests.integration.cli.conftest import run_plait
from tests.integration.server.harness import SPECS, Cluster, fresh_cluster

TEST_SPECS = Path(__file__).resolve().parent / "specs"
SPEC_SOURCES = [
    *sorted(TEST_SPECS.glob("*.yaml")),
    TEST_SPECS / "a2a_slow_steps.py",
    SPECS / "a2a-expense-agent.yaml",
    SPECS / "a2a-expense-caller.yaml",
    SPECS / "plait_examples",
]
EXPENSE_AGENT = "a2a-expense-agent"


@pytest.fixture(scope="session")
def a2a_server(
    postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """``plait serve`` (in-process workers) on a fresh database of its own."""
    work_dir = tmp_path_factory.mktemp("a2a-server")
    with fresh_cluster(postgres_server_url, work_dir, SPEC_SOURCES) as running:
        yield running


@pytest.fixture
async def http(a2a_server: Cluster) -> AsyncIterator[httpx.AsyncClient]:
    """Plain HTTP to the server (its logs since the test started are printed at teardown)."""
    offsets = a2a_server.log_sizes()
    async with httpx.AsyncClient(base_url=a2a_server.url, timeout=30.0) as opened:
        yield opened
    a2a_server.print_logs(since=offsets)


def agent_base(server: Cluster, graph: str) -> str:
    """The base URL an A2A client is given for ``graph``."""
    return f"{server.url}/a2a/{graph}"


@pytest.fixture
async def expense_client(a2a_server: Cluster, http: httpx.AsyncClient) -> AsyncIterator[Client]:
    """a2a-sdk's own client for the expense agent, resolved from its card URL."""
    config = ClientConfig(streaming=True, httpx_client=http)
    client = await create_client(agent_base(a2a_server, EXPENSE_AGENT), client_config=config)
    yield client
    await client.close()


@dataclass(frozen=True)
class Recorded:
    """A recorded caller thread, and the URL of its remote agent (stopped by now)."""

    path: Path
    data: dict[str, Any]
    agent_url: str
    #: The environment of a ``plait`` child (without a secret only the live run had).
    env: dict[str, str]


def run_caller(run_env: Mapping[str, str], caller: Path, values: Mapping[str, Any]) -> str:
    """``plait run`` ``caller`` on ``values``, the remote's question approved; its thread id."""
    ran = run_plait(
        dict(run_env),
        "run",
        caller,
        "-i",
        json.dumps(dict(values)),
        "-d",
        "approve",
        "--comment",
        "team offsite",
    )
    assert ran.code == 0, ran.stdout + ran.stderr
    found = re.search(r"started on thread ([0-9a-f-]{36})", ran.stdout)
    assert found, ran.stdout
    return found.group(1)


def record_to(
    env: dict[str, str], thread: str, caller: Path, path: Path
) -> tuple[dict[str, Any], str]:
    """``plait record`` ``thread`` of ``caller`` to ``path``: its data, what the command said."""
    written = run_plait(env, "record", thread, "--spec", caller, "-o", path)
    assert written.code == 0, written.stdout + written.stderr
    return json.loads(path.read_text(encoding="utf-8")), written.stdout
