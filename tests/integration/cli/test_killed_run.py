"""A ``plait run`` killed mid-node continues from its last checkpoint when run again."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from tests.integration.cli.conftest import PLAIT, TEST_SPECS, PlaitRunner, plait_env
from tests.integration.killed_runs import run_until_killed

BLOCKING = TEST_SPECS / "blocking.yaml"


def test_killed_run_continues_without_repeating_finished_nodes(
    plait: PlaitRunner, database_url: str, tmp_path: Path
) -> None:
    log = tmp_path / "side-effects.log"
    release = tmp_path / "release"
    thread = f"killed-{uuid.uuid4()}"
    payload = json.dumps({"log": str(log), "release": str(release)})
    seen = run_until_killed(
        [*PLAIT, "run", str(BLOCKING), "--input", payload, "--thread", thread, "--json"],
        plait_env(database_url),
        stop_at=lambda event: event["event"] == "node_started" and event["node"] == "wait",
        what="`wait` started",
    )
    assert [e["node"] for e in seen if e["event"] == "node_finished"] == ["first"]

    release.touch()
    continued = plait("run", BLOCKING, "--thread", thread, "--json")

    assert continued.code == 0, continued.stderr
    events = continued.events()
    assert events[0]["event"] == "notice"
    assert "stopped before wait" in events[0]["message"]
    assert "continuing from its last checkpoint" in events[0]["message"]
    assert [e["node"] for e in events if e["event"] == "node_started"] == ["wait", "last"]
    assert events[-1] == {
        "event": "completed",
        "output": {"steps": ["first", "wait-finished", "last"]},
        "state": "succeeded",
        "label": "succeeded",
    }
    lines = log.read_text().splitlines()
    assert lines.count("first") == 1  # not executed again
    assert lines.count("last") == 1
    assert lines[-2:] == ["wait-finished", "last"]
