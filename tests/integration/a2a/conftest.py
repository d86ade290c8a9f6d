"""One real ``plait serve`` serving graphs over A2A, and a2a-sdk clients pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.client.client import Client

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
