"""MCP tasks of the Tasks extension (2026-07-28), against a third-party server half.

The server is FastMCP with ``fastmcp-tasks`` (``specs/fastmcp_deploys.py``),
run by a real ``plait serve``: over stdio as its child (the task is awaited in
place), and over streamable HTTP in its own process (the run parks while the
task works, and the worker's poller resumes it). Its ``deploy`` task goes
``input_required``: the question becomes an approval in the inbox, and the
decision goes back to the task with ``tasks/update``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from langgraph_sdk import get_client
from psycopg.rows import dict_row

from tests.integration.mcp.conftest import free_port, listening, load_tool, serving_spec
from tests.integration.server.harness import Cluster
from tests.polling import until

TEST_SECONDS = 90.0
SERVER_SCRIPT = Path(__file__).resolve().parent / "specs" / "fastmcp_deploys.py"
STDIO_SERVER = f'{{transport: stdio, command: python, args: ["{SERVER_SCRIPT}"]}}'

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata:
  name: deploys
  version: "1.0.0"
spec:
  state:
    service: {type: string}
    outcome: {type: any}
  input: [service]
  mcp_servers:
    deploys: SERVER_DEF
  tools:
    deploy: {kind: mcp, server: deploys, task: true, timeout: 60s}
  nodes:
    deploy:
      kind: tool
      tool: deploy
      args: {service: state.service}
      output: outcome
  edges:
    - {from: START, to: deploy}
    - {from: deploy, to: END}
"""


@contextlib.contextmanager
def serving(postgres_server_url: str, tmp_path: Path, server: str) -> Iterator[tuple[Cluster, str]]:
    """``plait serve`` on a fresh database, the spec calling ``server``."""
    with serving_spec(
        postgres_server_url, tmp_path, "deploys", SPEC.replace("SERVER_DEF", server)
    ) as running:
        yield running


@pytest.fixture
def deploys_http(tmp_path: Path) -> Iterator[str]:
    """The FastMCP server over streamable HTTP on a free port; its endpoint."""
    port = free_port()
    command = [sys.executable, str(SERVER_SCRIPT), "--http", str(port)]
    with listening(command, port, tmp_path / "deploys.log"):
        yield f"http://127.0.0.1:{port}/mcp"


async def rows(database_url: str, query: str, *params: Any) -> list[dict[str, Any]]:
    async with await psycopg.AsyncConnection.connect(database_url, row_factory=dict_row) as conn:
        cursor = await conn.execute(query, params)
        return await cursor.fetchall()


async def decide_deploy(running: Cluster, decision: dict[str, Any]) -> tuple[str, Any]:
    """Start a deploy, check its question is an approval, decide it; the thread and output.

    A parked run (streamable HTTP) is resumed by the worker's poller: the
    approval appears once the task asks, and the output once it has ended.
    """
    async with (
        asyncio.timeout(TEST_SECONDS),
        get_client(url=running.url, api_key=None) as client,
        httpx.AsyncClient(base_url=running.url) as http,
    ):
        thread = await client.threads.create()
        thread_id = thread["thread_id"]
        await client.runs.wait(thread_id, "deploys", input={"service": "api"})

        async def asked() -> list[dict[str, Any]]:
            inbox = (await http.get("/approvals", params={"status": "pending"})).json()
            return [item for item in inbox if item["thread_id"] == thread_id]

        [approval] = await until(asked, "the task's question in the inbox")
        assert (await client.threads.get(thread_id))["status"] == "interrupted"
        assert approval["node"] == "deploy"
        assert approval["action"] == "answer deploys.deploy"
        assert approval["reason"].startswith("Deploy api to production?")
        assert "go (required): Deploy now" in approval["reason"]
        assert approval["arguments"] == {"go": None, "note": None}

        decided = await http.post(f"/approvals/{approval['approval_id']}/decision", json=decision)
        assert decided.status_code == 200, decided.text

        async def idle() -> bool:
            return (await client.threads.get(thread_id))["status"] == "idle"

        await until(idle, "the deploy to end")
        state = await client.threads.get_state(thread_id)
        assert isinstance(state["values"], dict)
        return str(thread_id), state["values"]["outcome"]


async def test_a_question_is_an_approval_whose_answer_goes_back_with_tasks_update(
    postgres_server_url: str, tmp_path: Path
) -> None:
    with serving(postgres_server_url, tmp_path, STDIO_SERVER) as (running, database_url):
        edit = {"decision": "edit", "arguments": {"go": True, "note": "ship it"}}
        thread_id, outcome = await decide_deploy(running, edit)
        assert outcome == "deployed api: ship it"  # the server saw the answer
        _, declined = await decide_deploy(running, {"decision": "reject"})
        assert declined == "not deployed: api"
        (task,) = await rows(
            database_url,
            "SELECT status, interrupts FROM plait_mcp_tasks WHERE thread_id = %s",
            thread_id,
        )
        assert task["status"] == "completed"
        assert [entry["kind"] for entry in task["interrupts"]] == ["question"]


async def test_over_streamable_http_the_run_parks_asks_and_parks_again(
    postgres_server_url: str, tmp_path: Path, deploys_http: str
) -> None:
    http_server = f'{{transport: http, url: "{deploys_http}"}}'
    with serving(postgres_server_url, tmp_path, http_server) as (running, database_url):
        edit = {"decision": "edit", "arguments": {"go": True, "note": "after a park"}}
        thread_id, outcome = await decide_deploy(running, edit)
        assert outcome == "deployed api: after a park"
        (task,) = await rows(
            database_url,
            "SELECT status, interrupts FROM plait_mcp_tasks WHERE thread_id = %s",
            thread_id,
        )
        assert task["status"] == "completed"
        kinds = [entry["kind"] for entry in task["interrupts"]]
        # Asked (perhaps after a park while the task started), then parked while it
        # deployed: the re-runs raised the interrupts again in this order.
        assert kinds.count("question") == 1
        assert kinds[kinds.index("question") + 1 :] == ["park"], kinds


DEPLOYS_STDIO = {"transport": "stdio", "command": "python", "args": [str(SERVER_SCRIPT)]}


async def test_a_plain_call_awaits_the_task_and_refuses_a_question() -> None:
    count = load_tool("count", {"server": "deploys", "timeout": 30}, {"deploys": DEPLOYS_STDIO})
    # FastMCP wraps a plain answer of a text-returning tool as structured content.
    assert await count.ainvoke({"n": 3}) == {"result": "counted 3"}
    deploy = load_tool("deploy", {"server": "deploys", "timeout": 30}, {"deploys": DEPLOYS_STDIO})
    with pytest.raises(Exception, match="give the tool `task: true`"):
        await deploy.ainvoke({"service": "api"})
