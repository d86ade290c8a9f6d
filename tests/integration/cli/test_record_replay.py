"""``plait record`` and ``plait replay`` as a user runs them: a real run with a model call,
two tools and an approval, recorded, replayed with nothing called, then replayed on an
edited prompt (same path) and on an edited route (the path changes: exit 6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.integration.cli.conftest import TEST_SPECS, PlaitRunner, copied_spec, started_thread

SPEC_DIR = TEST_SPECS / "replay"
MESSAGE = '{"message": "I want my money back for A-1"}'


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    return copied_spec(tmp_path, "replay", "replayed.yaml")


def _calls(replay_env: dict[str, str]) -> list[dict[str, object]]:
    path = Path(replay_env["REPLAY_CALLS"])
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _version(spec: Path, version: str, old: str, new: str) -> Path:
    """A copy of ``spec`` as another version, with ``old`` replaced by ``new``."""
    text = spec.read_text(encoding="utf-8")
    assert old in text
    edited = text.replace('version: "1.0.0"', f'version: "{version}"').replace(old, new)
    path = spec.with_name(f"replayed-{version}.yaml")
    path.write_text(edited, encoding="utf-8")
    return path


def _recorded_thread(plait: PlaitRunner, spec: Path, replay_env: dict[str, str]) -> str:
    return started_thread(
        plait, spec, "-i", MESSAGE, "-d", "approve", "--comment", "fine", env=replay_env
    )


def test_a_recorded_run_replays_with_no_model_or_tool_called(
    plait: PlaitRunner, spec: Path, replay_env: dict[str, str], tmp_path: Path
) -> None:
    thread = _recorded_thread(plait, spec, replay_env)
    assert [call["tool"] for call in _calls(replay_env)] == ["lookup_order", "issue_refund"]
    Path(replay_env["REPLAY_CALLS"]).unlink()
    recording = tmp_path / "refund.recording.json"

    recorded = plait("record", thread, "--spec", spec, "-o", recording, env=replay_env)

    assert recorded.code == 0, recorded.stdout + recorded.stderr
    assert "success, 4 steps, 1 model replies, 2 tool results, 1 decisions" in recorded.stdout
    data = json.loads(recording.read_text(encoding="utf-8"))
    assert data["input"] == json.loads(MESSAGE)
    assert data["decisions"] == [{"decision": "approve", "arguments": None, "comment": "fine"}]
    assert data["expected"]["steps"] == ["classify", "lookup", "approve", "refund"]
    assert data["expected"]["state"]["refund"] == {"status": "issued", "amount": 120.0}
    assert data["model_calls"][0]["node"] == "classify"
    assert [call["tool"] for call in data["tool_calls"]] == ["lookup_order", "issue_refund"]
    assert data["expected"]["usage"]["cost"] > 0  # the classifier has a price

    # The models' provider is one that cannot answer here: only the recording can.
    offline = spec.read_text(encoding="utf-8").replace(
        "provider: scripted", "provider: openai\n      model: gpt-4o-mini"
    )
    spec.write_text(offline, encoding="utf-8")
    replayed = plait("replay", recording, "--spec", spec, env=replay_env)

    assert replayed.code != 0, replayed.stdout + replayed.stderr  # another digest now
    assert "give the spec it was recorded on as --spec" in replayed.stderr
    original = tmp_path / "original.yaml"
    shutil.copy(SPEC_DIR / "replayed.yaml", original)
    shutil.copy(SPEC_DIR / "replay_steps.py", tmp_path / "replay_steps.py")
    replayed = plait("replay", recording, "--spec", original, "--against", spec, env=replay_env)

    assert replayed.code == 0, replayed.stdout + replayed.stderr
    assert "✓" in replayed.stdout and "success, 4 steps" in replayed.stdout
    assert "1 unchanged path(s), 0 changed" in replayed.stdout
    assert _calls(replay_env) == []  # no tool was called


def test_replay_against_an_edited_prompt_and_an_edited_route(
    plait: PlaitRunner, spec: Path, replay_env: dict[str, str], tmp_path: Path
) -> None:
    recording = tmp_path / "refund.recording.json"
    thread = _recorded_thread(plait, spec, replay_env)
    assert plait("record", thread, "--spec", spec, "-o", recording, env=replay_env).code == 0
    prompt = _version(spec, "1.0.1", "Classify: {{", "Classify this request: {{")
    route = _version(
        spec, "1.0.2", "when: \"state.kind == 'refund'\"", "when: \"state.kind == 'urgent'\""
    )

    same = plait("replay", recording, "--spec", spec, "--against", prompt, env=replay_env)
    changed = plait("replay", recording, "--spec", spec, "--against", route, env=replay_env)

    assert same.code == 0, same.stdout + same.stderr
    assert "replayed on replayed@1.0.1" in same.stdout
    assert changed.code == 6, changed.stdout + changed.stderr
    assert "✗" in changed.stdout
    assert "outcome: success -> failed" in changed.stdout
    assert "path: step 2 was lookup, now answer" in changed.stdout
    assert (
        "node 'answer': diverged from the recording: it asked 'writer' for reply 1 in this "
        "node; the recorded run had 0 model call(s) here"
    ) in changed.stdout
    assert "not asked for: 0 recorded model reply(ies), 2 tool result(s)" in changed.stdout


def test_record_and_replay_refuse_what_they_cannot_use(
    plait: PlaitRunner, spec: Path, replay_env: dict[str, str], tmp_path: Path
) -> None:
    unknown = plait(
        "record", "0d5c2b4e-6f1e-4c1e-9a55-3c8f4c7f7d10", "--spec", spec, env=replay_env
    )
    assert unknown.code != 0
    assert "no run was ever started on thread '0d5c2b4e-" in unknown.stderr

    thread = _recorded_thread(plait, spec, replay_env)
    edited = _version(spec, "1.0.3", "Classify: {{", "Sort: {{")
    wrong = plait("record", thread, "--spec", edited, env=replay_env)
    assert wrong.code != 0
    assert "ran replayed@1.0.0" in wrong.stderr and "git show" in wrong.stderr

    no_audit = spec.read_text(encoding="utf-8").replace("  audit: {model_calls: true}\n", "")
    spec.write_text(no_audit, encoding="utf-8")
    unaudited = _recorded_thread(plait, spec, replay_env)
    kept_nothing = plait("record", unaudited, "--spec", spec, env=replay_env)
    assert kept_nothing.code != 0
    assert "kept no model replies: set `audit: {model_calls: true}`" in kept_nothing.stderr

    not_a_recording = tmp_path / "other.json"
    not_a_recording.write_text('{"hello": 1}', encoding="utf-8")
    refused = plait("replay", not_a_recording, "--spec", spec, env=replay_env)
    assert refused.code != 0
    assert "not a Plait recording: its `format` must be 'plait-recording/v1'" in refused.stderr
