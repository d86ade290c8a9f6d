"""A process killed mid-agent: the resumed run reuses the tool call that had finished.

The real crash case: the agent's first tool call (a charge) completed and was
recorded, then the process died inside the same node, before the node's
checkpoint. LangGraph re-runs the whole node on resume; the charge must come
from its record, not from a second call.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from plait.engine.compiler import compile_spec
from plait.engine.run.events import Completed, Custom, RunEvent
from plait.engine.run.runner import run_graph
from plait.engine.spec.loader import load_spec
from plait.engine.store.pool import Pool
from tests.integration.killed_runs import run_until_killed

SPEC = Path(__file__).resolve().parent / "specs" / "charging_agent.yaml"
CHILD = "tests.integration.tools.run_in_child"


def _tool_events(events: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    return [
        (data["tool"], data["status"], data["reused"])
        for data in events
        if isinstance(data, dict) and data.get("plait") == "tool_call"
    ]


def _custom_data(event: dict[str, Any]) -> Any:
    """A custom event's payload; any other event as it is."""
    return event.get("data") if event["event"] == "custom" else event


def _run_until_waiting(env: dict[str, str], thread: str) -> list[dict[str, Any]]:
    """The run in a child process, SIGKILLed once its second tool call started."""
    seen = run_until_killed(
        [sys.executable, "-m", CHILD, str(SPEC), thread, '{"order": "o-1"}'],
        {**env, "PYTHONUNBUFFERED": "1"},
        stop_at=lambda event: (
            _tool_events([_custom_data(event)]) == [("wait_for_release", "started", False)]
        ),
        what="wait_for_release started",
    )
    return [_custom_data(event) for event in seen]


async def test_killed_agent_resumes_without_charging_twice(
    pool: Pool, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, release = tmp_path / "charges.log", tmp_path / "release"
    monkeypatch.setenv("PLAIT_TEST_TOOL_LOG", str(log))
    monkeypatch.setenv("PLAIT_TEST_TOOL_RELEASE", str(release))
    thread = f"charging-{uuid.uuid4()}"

    seen = _run_until_waiting({**os.environ, "PLAIT_DATABASE_URL": database_url}, thread)

    assert _tool_events(seen) == [
        ("charge", "started", False),
        ("charge", "ok", False),
        ("wait_for_release", "started", False),
    ]
    assert log.read_text().splitlines() == ["charged o-1 1250"]
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT node, tool, args, result FROM plait_tool_results WHERE thread_id = %s",
            (thread,),
        )
        rows = await cursor.fetchall()
    assert rows == [
        {
            "node": "pay",
            "tool": "charge",
            "args": {"order": "o-1", "cents": 1250},
            "result": {"order": "o-1", "cents": 1250, "status": "charged"},
        }
    ]

    # Continue the thread in this process: the agent node runs again from its start.
    release.touch()
    compiled = compile_spec(load_spec(SPEC))
    events: list[RunEvent] = [event async for event in run_graph(compiled, pool, thread)]

    assert isinstance(events[-1], Completed), events[-1]
    assert events[-1].output == {"answer": "charged o-1"}
    assert _tool_events([e.data for e in events if isinstance(e, Custom)]) == [
        ("charge", "ok", True),
        ("wait_for_release", "started", False),
        ("wait_for_release", "ok", False),
    ]
    assert log.read_text().splitlines() == ["charged o-1 1250"]  # charged exactly once
