"""A ``plait run`` killed after an MCP call was recorded does not call the tool again."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

from tests.integration.cli.conftest import run_plait
from tests.integration.killed_runs import run_until_killed
from tests.integration.server.harness import PLAIT

SPEC = Path(__file__).resolve().parent / "specs" / "mcp-killed.yaml"


def _block_started(event: dict[str, Any]) -> bool:
    data = event.get("data") or {}
    return bool(data.get("tool") == "block" and data.get("status") == "started")


def test_killed_run_reuses_the_recorded_mcp_call(database_url: str, tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    release = tmp_path / "release"
    thread = f"mcp-killed-{uuid.uuid4()}"
    env = {
        **os.environ,
        "PLAIT_DATABASE_URL": database_url,
        "MCP_DEMO_CALLS": str(calls),
        "PLAIT_TEST_RELEASE": str(release),
        "NO_COLOR": "1",
        "PYTHONUNBUFFERED": "1",
    }
    # Killed once the blocking tool has started: the ticket call is recorded by then.
    run_until_killed(
        [*PLAIT, "run", str(SPEC), "--input", "{}", "--thread", thread, "--json"],
        env,
        stop_at=_block_started,
        what="`block` started",
    )
    assert len(calls.read_text().splitlines()) == 1

    release.touch()
    continued = run_plait(env, "run", SPEC, "--thread", thread, "--json")
    assert continued.code == 0, continued.stderr
    events = [json.loads(line) for line in continued.stdout.splitlines() if line.strip()]
    ticket_events = [
        e["data"] for e in events if (e.get("data") or {}).get("tool") == "create_ticket"
    ]
    # The recorded result is announced with the reuse (what the inspector shows).
    assert all(event.pop("result") for event in ticket_events)
    assert ticket_events == [
        {
            "plait": "tool_call",
            "node": "help",
            "tool": "create_ticket",
            "args": {"title": "Printer on fire"},
            "status": "ok",
            "reused": True,
        }
    ]
    assert events[-1] == {
        "event": "completed",
        "output": {"answer": "Ticket opened."},
        "state": "succeeded",
        "label": "succeeded",
    }
    # The demo server saw one call in all: the resumed run reused the record.
    (call,) = [json.loads(line) for line in calls.read_text().splitlines()]
    assert call["tool"] == "create_ticket" and len(call["key"]) == 64
