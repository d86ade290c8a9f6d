"""MCP tasks of the 2025-11-25 revision, against the TypeScript SDK's ``server-everything``.

The server (npm ``@modelcontextprotocol/server-everything``, a devDependency
installed by ``npm ci``) runs over stdio as a child of a real ``plait serve``,
and over streamable HTTP on a free port.
Its ``simulate-research-query`` says ``execution.taskSupport: required`` and
reads ``params.task``; with ``ambiguous: true`` the task goes
``input_required`` and asks for a clarification (``elicitation/create``),
which Plait turns into an approval.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from langgraph_sdk import get_client
from psycopg.rows import dict_row

from tests.integration.mcp.conftest import REPO, free_port, listening, load_tool, serving_spec
from tests.integration.server.harness import Cluster
from tests.polling import until

TEST_SECONDS = 90.0
EVERYTHING = REPO / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
SERVER = {"transport": "stdio", "command": "node", "args": [str(EVERYTHING), "stdio"]}

STDIO_SERVER = f'{{transport: stdio, command: node, args: ["{EVERYTHING}", stdio]}}'

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata:
  name: research
  version: "1.0.0"
spec:
  state:
    topic: {type: string}
    ambiguous: {type: boolean}
    report: {type: string}
  input: [topic, ambiguous]
  mcp_servers:
    everything: SERVER_DEF
  tools:
    # No task: true: the server says the tool runs only as a task.
    research: {kind: mcp, server: everything, tool: simulate-research-query}
  nodes:
    research:
      kind: tool
      tool: research
      args: {topic: state.topic, ambiguous: state.ambiguous}
      output: report
  edges:
    - {from: START, to: research}
    - {from: research, to: END}
"""


@contextlib.contextmanager
def serving(postgres_server_url: str, tmp_path: Path, server: str) -> Iterator[tuple[Cluster, str]]:
    """``plait serve`` on a fresh database, the spec calling ``server``."""
    assert EVERYTHING.exists(), "npm ci installs @modelcontextprotocol/server-everything"
    with serving_spec(
        postgres_server_url, tmp_path, "research", SPEC.replace("SERVER_DEF", server)
    ) as running:
        yield running


@pytest.fixture
def server(postgres_server_url: str, tmp_path: Path) -> Iterator[tuple[Cluster, str]]:
    """The spec calling server-everything over stdio (a child of ``plait serve``)."""
    with serving(postgres_server_url, tmp_path, STDIO_SERVER) as running:
        yield running


@pytest.fixture
def everything_http(tmp_path: Path) -> Iterator[str]:
    """server-everything over streamable HTTP on a free port; its endpoint."""
    port = free_port()
    command = ["node", str(EVERYTHING), "streamableHttp"]
    env = {**os.environ, "PORT": str(port)}
    with listening(command, port, tmp_path / "everything.log", env=env):
        yield f"http://127.0.0.1:{port}/mcp"


async def rows(database_url: str, query: str, *params: Any) -> list[dict[str, Any]]:
    async with await psycopg.AsyncConnection.connect(database_url, row_factory=dict_row) as conn:
        cursor = await conn.execute(query, params)
        return await cursor.fetchall()


async def test_a_required_task_tool_runs_as_a_task(server: tuple[Cluster, str]) -> None:
    running, database_url = server
    async with asyncio.timeout(TEST_SECONDS), get_client(url=running.url, api_key=None) as client:
        thread = await client.threads.create()
        output = await client.runs.wait(
            thread["thread_id"], "research", input={"topic": "tides", "ambiguous": False}
        )
        assert isinstance(output, dict)
        assert output["report"].startswith("# Research Report: tides\n"), output
        assert "Stage 4: Generating report" in output["report"]
        (task,) = await rows(
            database_url,
            "SELECT tool, status FROM plait_mcp_tasks WHERE thread_id = %s",
            thread["thread_id"],
        )
        assert task == {"tool": "simulate-research-query", "status": "completed"}


async def test_a_question_becomes_an_approval_whose_answer_reaches_the_task(
    server: tuple[Cluster, str],
) -> None:
    await answer_a_question(server[0], "snake")


async def test_over_streamable_http_a_task_waits_in_place_and_its_question_is_answered(
    postgres_server_url: str, tmp_path: Path, everything_http: str
) -> None:
    http_server = f'{{transport: http, url: "{everything_http}"}}'
    with serving(postgres_server_url, tmp_path, http_server) as (running, database_url):
        thread_id = await answer_a_question(running, "comedy")
        # A core task's question comes on the session that waits for it: never parked.
        (task,) = await rows(
            database_url,
            "SELECT interrupt_id, status FROM plait_mcp_tasks WHERE thread_id = %s",
            thread_id,
        )
        assert task == {"interrupt_id": None, "status": "completed"}


async def answer_a_question(running: Cluster, interpretation: str) -> str:
    """Run an ambiguous query, answer its approval with ``interpretation``; return the thread."""
    async with (
        asyncio.timeout(TEST_SECONDS),
        get_client(url=running.url, api_key=None) as client,
        httpx.AsyncClient(base_url=running.url) as http,
    ):
        thread = await client.threads.create()
        thread_id = thread["thread_id"]
        await client.runs.wait(thread_id, "research", input={"topic": "python", "ambiguous": True})
        assert (await client.threads.get(thread_id))["status"] == "interrupted"

        inbox = (await http.get("/approvals", params={"status": "pending"})).json()
        [approval] = [item for item in inbox if item["thread_id"] == thread_id]
        assert approval["node"] == "research"
        assert approval["action"] == "answer everything.simulate-research-query"
        assert "multiple interpretations" in approval["reason"]
        assert '"snake" (Python snake species)' in approval["reason"]
        assert approval["arguments"] == {"interpretation": None}

        decided = await http.post(
            f"/approvals/{approval['approval_id']}/decision",
            json={"decision": "edit", "arguments": {"interpretation": interpretation}},
        )
        assert decided.status_code == 200, decided.text
        joined = await client.runs.join(thread_id, decided.json()["run"]["run_id"])
        assert isinstance(joined, dict)
        title = f"# Research Report: python ({interpretation})\n"
        assert joined["report"].startswith(title), joined
        assert f"- **Clarification**: {interpretation}" in joined["report"]
        assert (await client.threads.get(thread_id))["status"] == "idle"
        return str(thread_id)


async def test_cancelling_the_run_cancels_the_task(server: tuple[Cluster, str]) -> None:
    running, database_url = server
    async with asyncio.timeout(TEST_SECONDS), get_client(url=running.url, api_key=None) as client:
        thread = await client.threads.create()
        thread_id = thread["thread_id"]
        run = await client.runs.create(
            thread_id, "research", input={"topic": "glaciers", "ambiguous": False}
        )

        async def started() -> list[dict[str, Any]]:
            return await rows(
                database_url, "SELECT key FROM plait_mcp_tasks WHERE thread_id = %s", thread_id
            )

        (task,) = await until(started, "the task to be recorded", TEST_SECONDS)
        await client.runs.cancel(thread_id, run["run_id"])

        async def cancelled() -> bool:
            # Written once the server answered tasks/cancel.
            (after,) = await rows(
                database_url, "SELECT status FROM plait_mcp_tasks WHERE key = %s", task["key"]
            )
            return after["status"] == "cancelled"

        await until(cancelled, "the server to cancel the task", TEST_SECONDS)

        async def run_ended() -> bool:
            found = await client.runs.get(thread_id, run["run_id"])
            return found["status"] == "interrupted"

        await until(run_ended, "the cancelled run to end", TEST_SECONDS)


def test_task_true_on_a_tool_the_server_runs_only_at_once_is_refused() -> None:
    with pytest.raises(ValueError, match=r"task: true.*get-sum.*taskSupport is forbidden"):
        load_tool(
            "sum", {"server": "everything", "tool": "get-sum", "task": True}, {"everything": SERVER}
        )
