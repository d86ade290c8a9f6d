"""An ``idempotent: false`` MCP tool whose client died between the server's effect and its answer.

A child process runs the spec until the stdio server has opened the ticket
and reports progress (it then waits), and is SIGKILLed there: the intent is
recorded, the result is not. Continued in this process, the call is in doubt:
with ``reconcile`` (a python function reading the server's calls by
idempotency key) the ticket is found and the server is not called again;
without it the run parks on an approval, and an ``edit`` supplies the ticket.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from plait.engine.compiler import compile_spec
from plait.engine.run.events import Completed, Custom, Interrupted, RunEvent
from plait.engine.run.runner import run_graph
from plait.engine.spec.loader import load_spec
from plait.engine.store.pool import Pool
from tests.integration.killed_runs import run_until_killed

SERVER = Path(__file__).resolve().parent / "specs" / "mcp_doubtful.py"
CHILD = "tests.integration.tools.run_in_child"

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {{name: mcp-doubtful, version: "1.0.0"}}
spec:
  state:
    ticket: {{type: object}}
  output: [ticket]
  mcp_servers:
    desk:
      transport: stdio
      command: python
      args: [mcp_doubtful.py, --calls, "{calls}", --release, "{release}"]
  tools:
    open_ticket:
      kind: mcp
      server: desk
      tool: create_ticket
      idempotent: false
      timeout: 60s{reconcile}
  nodes:
    open:
      kind: tool
      tool: open_ticket
      args: {{title: "'Printer on fire'"}}
      output: ticket
  edges:
    - {{from: START, to: open}}
    - {{from: open, to: END}}
"""


def _spec(folder: Path, *, reconcile: bool) -> Path:
    shutil.copy2(SERVER, folder / SERVER.name)
    extra = '\n      reconcile: "mcp_doubtful:ticket_of"' if reconcile else ""
    path = folder / "mcp-doubtful.yaml"
    path.write_text(
        SPEC.format(calls=folder / "calls.jsonl", release=folder / "release", reconcile=extra),
        encoding="utf-8",
    )
    return path


def _calls(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "calls.jsonl").read_text().splitlines()]


async def _continue(pool: Pool, spec: Path, thread: str, **kwargs: Any) -> list[RunEvent]:
    compiled = compile_spec(load_spec(spec))
    return [event async for event in run_graph(compiled, pool, thread, **kwargs)]


def _kill_once_created(spec: Path, thread: str, database_url: str) -> None:
    env = {**os.environ, "PLAIT_DATABASE_URL": database_url, "PYTHONUNBUFFERED": "1"}
    run_until_killed(
        [sys.executable, "-m", CHILD, str(spec), thread, "{}"],
        env,
        stop_at=lambda event: (event.get("data") or {}).get("plait") == "tool_progress",
        what="the server's progress after opening the ticket",
    )


@pytest.mark.parametrize("reconcile", [True, False], ids=["reconcile", "ask"])
async def test_an_mcp_call_in_doubt_is_not_sent_twice(
    pool: Pool,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reconcile: bool,
) -> None:
    monkeypatch.setenv("PLAIT_TEST_MCP_CALLS", str(tmp_path / "calls.jsonl"))
    spec = _spec(tmp_path, reconcile=reconcile)
    thread = f"mcp-doubt-{uuid.uuid4()}"
    _kill_once_created(spec, thread, database_url)
    (call,) = _calls(tmp_path)
    (tmp_path / "release").touch()

    events = await _continue(pool, spec, thread)

    if not reconcile:
        waiting = events[-1]
        assert isinstance(waiting, Interrupted), events[-1]
        assert waiting.payload["in_doubt"]["key"] == call["key"]
        assert waiting.payload["action"] == "open_ticket"
        ticket = {"ticket": "T-0001", "title": "Printer on fire"}
        answer = {"decision": "edit", "arguments": ticket}
        events = await _continue(pool, spec, thread, decisions={waiting.interrupt_id: answer})
    done = events[-1]
    assert isinstance(done, Completed), done
    assert done.output["ticket"] == {"ticket": "T-0001", "title": "Printer on fire"}
    assert len(_calls(tmp_path)) == 1, "the server was asked to open the ticket once"
    outcomes = [
        e.data["outcome"]
        for e in events
        if isinstance(e, Custom)
        and isinstance(e.data, dict)
        and e.data.get("plait") == "tool_in_doubt"
    ]
    assert outcomes == (["reconciled"] if reconcile else ["edited"])
