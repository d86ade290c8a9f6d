"""A ``plait worker`` stopped with SIGTERM leaves no process of its tool calls behind.

One worker process runs two graphs. The first leaves a ``sleep`` running (its
call returned), starts a stdio MCP server, then times out in a tool whose
``sleep`` it never waits for: that ``sleep`` ends with the call, the MCP server
(the hub's, no call's) and the returned call's ``sleep`` stay. The second
blocks in a sync tool waiting for its ``sleep``; the worker gets SIGTERM while
it waits. Once the worker has exited, none of these processes runs.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.server.harness import STOP_TIMEOUT_SECONDS, Cluster, fresh_cluster
from tests.polling import until
from tests.processes import kill_noted, running

HERE = Path(__file__).resolve().parent
SOURCES = [
    HERE / "specs" / "children.yaml",
    HERE / "specs" / "children-block.yaml",
    HERE / "specs" / "children_mcp.py",
    HERE.parents[2] / "unit" / "governance" / "tools" / "fixtures_py" / "plait_children_fns.py",
]
TEST_SECONDS = 120.0


@pytest.fixture
def pids(tmp_path: Path) -> Iterator[Path]:
    """Where the tools note their pids; what they noted is killed at the end in any case."""
    folder = tmp_path / "pids"
    folder.mkdir()
    yield folder
    kill_noted(folder)


@pytest.fixture
def one_worker(postgres_server_url: str, tmp_path: Path, pids: Path) -> Iterator[Cluster]:
    with fresh_cluster(
        postgres_server_url,
        tmp_path / "cluster",
        SOURCES,
        serve_args=["--no-workers"],
        workers=1,
        extra_env={"PLAIT_TEST_PIDS": str(pids)},
    ) as running_cluster:
        yield running_cluster


async def _noted(folder: Path, name: str) -> int:
    async def found() -> int | None:
        path = folder / name
        text = path.read_text().strip() if path.exists() else ""
        return int(text) if text.isdigit() else None

    pid: int = await until(found, f"the tool to note the pid of {name!r}")
    return pid


async def _ended(pid: int, what: str) -> None:
    async def gone() -> bool:
        return not running(pid)

    await until(gone, f"{what} (pid {pid}) to end")


async def _run(http: httpx.AsyncClient, graph: str, *, wait: bool) -> tuple[str, dict[str, Any]]:
    """Start a run of ``graph`` on a new thread (and wait for it); (thread id, its answer)."""
    thread = (await http.post("/threads", json={})).raise_for_status().json()["thread_id"]
    path = f"/threads/{thread}/runs/wait" if wait else f"/threads/{thread}/runs"
    response = await http.post(path, json={"assistant_id": graph, "input": {}})
    return thread, response.raise_for_status().json()


async def test_a_stopped_worker_leaves_no_child_process(one_worker: Cluster, pids: Path) -> None:
    (worker,) = one_worker.workers
    async with (
        asyncio.timeout(TEST_SECONDS),
        httpx.AsyncClient(base_url=one_worker.url, timeout=60.0) as http,
    ):
        thread, first = await _run(http, "children", wait=True)
        assert "timed out after 0.5s" in first["__error__"]["message"], first
        state = (await http.get(f"/threads/{thread}/state")).raise_for_status().json()
        server = int(state["values"]["server"]["pid"])
        left, slow = await _noted(pids, "left"), await _noted(pids, "slow")

        await _ended(slow, "the timed-out call's sleep")
        assert running(left), "a call that returned keeps its process while the worker runs"
        assert running(server), "an unrelated call's timeout must not end the MCP server"

        await _run(http, "children-block", wait=False)
        block = await _noted(pids, "block")
        assert running(block)

        worker.process.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(worker.process.wait, STOP_TIMEOUT_SECONDS)
        assert code == 0, worker.log()

        for pid, what in [
            (block, "the blocked call's sleep"),
            (left, "the sleep a returned call left"),
            (server, "the stdio MCP server"),
        ]:
            await _ended(pid, what)
