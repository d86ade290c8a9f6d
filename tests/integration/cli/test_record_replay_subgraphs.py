"""``plait record`` keeps the decisions given to approvals inside subgraphs, in the order they
were given among the top level's: a replay gives each its own again."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.cli.conftest import PlaitRunner, copied_spec, started_thread


def test_decisions_inside_subgraphs_are_recorded_in_the_order_given(
    plait: PlaitRunner, tmp_path: Path
) -> None:
    spec = copied_spec(tmp_path, "replay_nested", "approvals-around-subgraphs.yaml")
    thread = started_thread(plait, spec)  # the example's three decisions, in order
    recording = tmp_path / "nested.recording.json"

    recorded = plait("record", thread, "--spec", spec, "-o", recording)

    assert recorded.code == 0, recorded.stdout + recorded.stderr
    assert "success, 3 steps, 0 model replies, 0 tool results, 3 decisions" in recorded.stdout
    data = json.loads(recording.read_text(encoding="utf-8"))
    assert [decision["comment"] for decision in data["decisions"]] == ["one", "two", "three"]
    state = data["expected"]["state"]
    assert [state[name]["decision"] for name in ("first", "second", "third")] == [
        "approve",
        "reject",
        "approve",
    ]

    replayed = plait("replay", recording, "--spec", spec)

    assert replayed.code == 0, replayed.stdout + replayed.stderr
    assert f"✓ {recording}  success, 3 steps" in replayed.stdout
    assert "1 unchanged path(s), 0 changed" in replayed.stdout
