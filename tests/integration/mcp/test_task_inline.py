"""Task tools outside a server (``plait run``, tests): the node waits for its task in place."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

from plait.engine.compiler import CompiledSpec, compile_spec
from plait.engine.run.events import Completed, Custom, Failed, RunEvent
from plait.engine.run.runner import new_thread_id, run_graph
from plait.engine.spec.loader import parse_spec
from plait.engine.store.pool import Pool
from plait.engine.tools.mcp.hub import ServerConnection, on_hub
from plait.engine.tools.mcp.tasks import get_task
from tests.integration.mcp.conftest import NO_SECRETS, DemoServer

DEADLINE_SECONDS = 30.0

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata:
  name: mcp-task-inline
  version: "1.0.0"
spec:
  state:
    seconds: {type: number}
    fail: {type: boolean}
    report: {type: object}
  input: [seconds, fail]
  mcp_servers:
    demo: {transport: http, url: "URL"}
  tools:
    slow_report: {kind: mcp, server: demo, task: true}
  nodes:
    report:
      kind: tool
      tool: slow_report
      args: {topic: "'inline'", seconds: state.seconds, fail: state.fail}
      output: report
  edges:
    - {from: START, to: report}
    - {from: report, to: END}
"""


def compiled(demo: DemoServer, folder: Path) -> CompiledSpec:
    return compile_spec(
        parse_spec(SPEC.replace("URL", demo.url), str(folder / "mcp-task-inline.yaml"))
    )


async def test_a_task_is_awaited_in_place_and_recorded(
    pool: Pool, demo_http: DemoServer, tmp_path: Path
) -> None:
    thread = new_thread_id()
    async with contextlib.aclosing(
        run_graph(
            compiled(demo_http, tmp_path), pool, thread, input={"seconds": 0.3, "fail": False}
        )
    ) as events:
        seen: list[RunEvent] = [event async for event in events]
    assert isinstance(seen[-1], Completed), seen[-1]
    assert seen[-1].output["report"]["topic"] == "inline"
    started = [e.data for e in seen if isinstance(e, Custom) and e.data.get("plait") == "mcp_task"]
    assert len(started) == 1
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT task_id, status FROM plait_mcp_tasks WHERE thread_id = %s", (thread,)
        )
        rows = await cursor.fetchall()
    assert rows == [{"task_id": started[0]["task_id"], "status": "completed"}]


async def test_a_failed_task_is_a_typed_error_and_not_kept(
    pool: Pool, demo_http: DemoServer, tmp_path: Path
) -> None:
    thread = new_thread_id()
    async with contextlib.aclosing(
        run_graph(compiled(demo_http, tmp_path), pool, thread, input={"seconds": 0.1, "fail": True})
    ) as events:
        seen: list[RunEvent] = [event async for event in events]
    failed = seen[-1]
    assert isinstance(failed, Failed), failed
    assert "ToolReportedError" in failed.error and "no report on inline" in failed.error
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT count(*) AS n FROM plait_mcp_tasks WHERE thread_id = %s", (thread,)
        )
        row = await cursor.fetchone()
    assert row == {"n": 0}  # a retry of the call would start a new task


async def test_cancelling_the_run_cancels_the_task(
    pool: Pool, demo_http: DemoServer, tmp_path: Path
) -> None:
    started = asyncio.get_running_loop().create_future()

    async def consume() -> None:
        graph = compiled(demo_http, tmp_path)
        async with contextlib.aclosing(
            run_graph(graph, pool, new_thread_id(), input={"seconds": 60, "fail": False})
        ) as events:
            async for event in events:
                if isinstance(event, Custom) and event.data.get("plait") == "mcp_task":
                    started.set_result(event.data["task_id"])

    running = asyncio.create_task(consume())
    task_id = await asyncio.wait_for(started, DEADLINE_SECONDS)
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running

    demo = ServerConnection.from_json(
        {"name": "demo", "definition": {"transport": "http", "url": demo_http.url}, "base_dir": "."}
    )
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        task = await on_hub(demo, NO_SECRETS, lambda client, _: get_task(client.session, task_id))
        if task.status == "cancelled":
            break
        assert time.monotonic() < deadline, f"task still {task.status}"
        await asyncio.sleep(0.05)  # the server's state: polled with a deadline
