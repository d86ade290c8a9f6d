"""One real ``plait serve`` (with in-process workers) for the protocol tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from tests.integration.server.harness import SPECS, Cluster, fresh_cluster

TEST_SPECS = Path(__file__).resolve().parent / "specs"
#: The specs this server serves: the test graphs, the approval and subgraph examples.
SPEC_SOURCES = [
    *sorted(TEST_SPECS.glob("*.yaml")),
    TEST_SPECS / "sdk_steps.py",
    SPECS / "refund-approval.yaml",
    SPECS / "support-subgraph.yaml",
    SPECS / "summarize.yaml",
    SPECS / "chat.yaml",
    SPECS / "planner-team.yaml",  # an agent whose tool calls stream (thread streams)
    SPECS / "plait_examples",
]


@pytest.fixture(scope="session")
def sdk_server(
    postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """``plait serve`` on its own fresh database (no other test's workers can claim its runs)."""
    work_dir = tmp_path_factory.mktemp("sdk-server")
    with fresh_cluster(postgres_server_url, work_dir, SPEC_SOURCES) as running:
        yield running


@pytest.fixture
async def client(sdk_server: Cluster) -> AsyncIterator[LangGraphClient]:
    """The LangGraph SDK client, unchanged, pointed at the server.

    At teardown it prints what the server logged during the test: pytest shows
    that output only when the test failed.
    """
    offsets = sdk_server.log_sizes()
    async with get_client(url=sdk_server.url, api_key=None, timeout=60.0) as opened:
        yield opened
    sdk_server.print_logs(since=offsets)
