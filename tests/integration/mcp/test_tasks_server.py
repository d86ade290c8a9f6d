"""The MCP Tasks extension end to end, through a real ``plait serve`` and the demo server.

The run parks on the task (its thread ``interrupted``, no run pending or
running, nothing in the approvals inbox); the worker's poller resumes it when
the task completes. Deleting a parked thread cancels its task on the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from langgraph_sdk import get_client
from psycopg.rows import dict_row

from plait.engine.tools.mcp.hub import ServerConnection, on_hub
from plait.engine.tools.mcp.tasks import get_task
from tests.conftest import fresh_database
from tests.integration.mcp.conftest import NO_SECRETS, DemoServer
from tests.integration.server.harness import Cluster, cluster
from tests.polling import until

TEST_SECONDS = 90.0

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata:
  name: mcp-task
  version: "1.0.0"
spec:
  state:
    topic: {type: string}
    seconds: {type: number}
    report: {type: object}
  input: [topic, seconds]
  mcp_servers:
    demo: {transport: http, url: "URL"}
  tools:
    slow_report: {kind: mcp, server: demo, task: true}
  nodes:
    report:
      kind: tool
      tool: slow_report
      args: {topic: state.topic, seconds: state.seconds}
      output: report
  edges:
    - {from: START, to: report}
    - {from: report, to: END}
"""


@pytest.fixture
def server(
    postgres_server_url: str, tmp_path: Path, demo_http: DemoServer
) -> Iterator[tuple[Cluster, str]]:
    """``plait serve`` (with its workers) on a fresh database, serving the spec above."""
    spec = tmp_path / "mcp-task.yaml"
    spec.write_text(SPEC.replace("URL", demo_http.url))
    with (
        fresh_database(postgres_server_url) as url,
        cluster(url, tmp_path / "cluster", [spec]) as running,
    ):
        yield running, url


async def rows(database_url: str, query: str, *params: Any) -> list[dict[str, Any]]:
    async with await psycopg.AsyncConnection.connect(database_url, row_factory=dict_row) as conn:
        cursor = await conn.execute(query, params)
        return await cursor.fetchall()


async def park(running: Cluster, topic: str, seconds: float) -> str:
    """Start a run of the task tool; return its thread once the run has parked."""
    async with get_client(url=running.url, api_key=None) as client:
        thread = await client.threads.create()
        await client.runs.wait(
            thread["thread_id"], "mcp-task", input={"topic": topic, "seconds": seconds}
        )
        found = await client.threads.get(thread["thread_id"])
        assert found["status"] == "interrupted", found
        return str(thread["thread_id"])


async def test_a_task_parks_the_run_and_the_poller_resumes_it(
    server: tuple[Cluster, str],
) -> None:
    running, database_url = server
    async with asyncio.timeout(TEST_SECONDS):
        # Long enough that the checks below run while the task still works.
        thread_id = await park(running, "billing", 4.0)

        # Parked: no run of the thread holds a worker, the task is recorded, not an approval.
        active = await rows(
            database_url,
            "SELECT run_id FROM plait_runs WHERE thread_id = %s "
            "AND status IN ('pending', 'running')",
            thread_id,
        )
        (task,) = await rows(
            database_url, "SELECT * FROM plait_mcp_tasks WHERE thread_id = %s", thread_id
        )
        async with httpx.AsyncClient(base_url=running.url) as http:
            inbox = (await http.get("/approvals")).json()
        items = inbox["items"] if isinstance(inbox, dict) else inbox
        assert active == []
        assert task["interrupt_id"] and task["resume_run_id"] is None
        assert task["tool"] == "slow_report" and task["status"] == "working"
        assert [a for a in items if a["thread_id"] == thread_id] == []
        # The run ended `success` for the SDK; Plait says it waits on the tool, not a person.
        async with get_client(url=running.url, api_key=None) as client:
            (listed,) = await client.runs.list(thread_id)
        parked = dict(listed)
        assert (parked["status"], parked["plait_state"]) == ("success", "waiting_for_tool")
        assert parked["plait_state_label"] == "waiting for demo/slow_report"

        async def resumed() -> dict[str, Any] | None:
            async with get_client(url=running.url, api_key=None) as client:
                found = dict(await client.threads.get(thread_id))
            return found if found["status"] == "idle" else None

        thread = await until(resumed, "the thread to be resumed and finish", TEST_SECONDS)
        assert thread["values"]["report"] == {
            "topic": "billing",
            "report": "All quiet on billing.",
            "seconds": 4.0,
        }
        runs = await rows(
            database_url,
            "SELECT status, state, metadata FROM plait_runs WHERE thread_id = %s ORDER BY queue_id",
            thread_id,
        )
        assert [r["status"] for r in runs] == ["success", "success"]
        assert [r["state"] for r in runs] == ["succeeded", "succeeded"]  # no longer waiting
        assert runs[1]["metadata"]["plait_mcp_task"]["status"] == "completed"
        (task,) = await rows(
            database_url, "SELECT * FROM plait_mcp_tasks WHERE thread_id = %s", thread_id
        )
        assert task["status"] == "completed"


async def test_deleting_a_parked_thread_cancels_its_task(
    server: tuple[Cluster, str], demo_http: DemoServer
) -> None:
    running, database_url = server
    async with asyncio.timeout(TEST_SECONDS):
        thread_id = await park(running, "payroll", 60.0)
        (task,) = await rows(
            database_url, "SELECT * FROM plait_mcp_tasks WHERE thread_id = %s", thread_id
        )
        async with get_client(url=running.url, api_key=None) as client:
            await client.threads.delete(thread_id)

        demo = ServerConnection.from_json(task["server"])

        async def cancelled_on_the_server() -> bool:
            found = await on_hub(
                demo, NO_SECRETS, lambda c, _: get_task(c.session, task["task_id"])
            )
            return found.status == "cancelled"

        async def cancelled_in_the_record() -> bool:
            # Written after the server's cancel: polled too, not read once.
            (after,) = await rows(
                database_url, "SELECT status FROM plait_mcp_tasks WHERE key = %s", task["key"]
            )
            return after["status"] == "cancelled"

        await until(
            cancelled_on_the_server, "the task to be cancelled on the MCP server", TEST_SECONDS
        )
        await until(cancelled_in_the_record, "the task's record to say cancelled", TEST_SECONDS)
