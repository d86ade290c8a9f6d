"""``plait record`` keeps the decisions given to approvals inside subgraphs, in the order they
were given among the top level's: a replay gives each its own again."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.integration.cli.conftest import TEST_SPECS, PlaitRunner

SPEC_DIR = TEST_SPECS / "replay_nested"


def test_decisions_inside_subgraphs_are_recorded_in_the_order_given(
    plait: PlaitRunner, tmp_path: Path
) -> None:
    shutil.copytree(SPEC_DIR, tmp_path / "specs")
    spec = tmp_path / "specs" / "approvals-around-subgraphs.yaml"
    ran = plait("run", spec)  # the example's three decisions, in order
    assert ran.code == 0, ran.stdout + ran.stderr
    found = re.search(r"started on thread ([0-9a-f-]{36})", ran.stdout)
    assert found, ran.stdout
    recording = tmp_path / "nested.recording.json"

    recorded = plait("record", found.group(1), "--spec", spec, "-o", recording)

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
