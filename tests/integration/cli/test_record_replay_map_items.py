"""``plait record`` and ``plait replay`` of maps whose items call a model (`each`: `llm`
items) and a tool (`look`: `tool` items) themselves, three at once: each item's calls are
kept under its own path (`each[1]`), so a replay gives each item its own reply whatever
order items ask in, and a missing one diverges naming the item. Files and threads from
before, which keep a map's calls together under its path (`each`), still replay."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.integration.cli.conftest import PlaitRunner, copied_spec, started_thread

CLAIMS = ["taxi", "hotel", "dinner"]
KINDS = ["travel", "lodging", "meals"]
INPUT = json.dumps({"claims": CLAIMS})


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    return copied_spec(tmp_path, "replay_map_items", "items.yaml")


def _record(
    plait: PlaitRunner, spec: Path, replay_env: dict[str, str], thread: str, target: Path
) -> Any:
    recorded = plait("record", thread, "--spec", spec, "-o", target, env=replay_env)
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    assert "success, 2 steps, 3 model replies, 3 tool results, 0 decisions" in recorded.stdout
    return json.loads(target.read_text(encoding="utf-8"))


def _write(data: Any, target: Path) -> Path:
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def test_each_item_keeps_its_own_calls_and_a_replay_gives_them_back_to_it(
    plait: PlaitRunner, spec: Path, replay_env: dict[str, str], tmp_path: Path
) -> None:
    thread = started_thread(plait, spec, "-i", INPUT, env=replay_env)
    data = _record(plait, spec, replay_env, thread, tmp_path / "items.json")

    replies = {call["node"]: call["reply"]["content"] for call in data["model_calls"]}
    assert replies == {f"each[{i}]": kind for i, kind in enumerate(KINDS)}
    results = {call["node"]: call["result"]["order_id"] for call in data["tool_calls"]}
    assert results == {f"look[{i}]": claim for i, claim in enumerate(CLAIMS)}
    Path(replay_env["REPLAY_CALLS"]).unlink()

    # Listed last item first: taken in the order asked from one queue, item 0 would get
    # item 2's reply, and the replayed state would differ from the recorded.
    data["model_calls"].sort(key=lambda call: call["node"], reverse=True)
    reversed_file = _write(data, tmp_path / "reversed.json")

    replayed = plait("replay", reversed_file, "--spec", spec, env=replay_env)

    assert replayed.code == 0, replayed.stdout + replayed.stderr
    assert f"✓ {reversed_file}  success, 2 steps\n" in replayed.stdout  # no state changed
    assert not Path(replay_env["REPLAY_CALLS"]).exists()  # no tool was called

    # Without item 1's reply, item 1 leaves the recording (it takes no other item's).
    data["model_calls"] = [call for call in data["model_calls"] if call["node"] != "each[1]"]
    lacking = _write(data, tmp_path / "lacking.json")

    diverged = plait("replay", lacking, "--spec", spec, env=replay_env)

    assert diverged.code == 6, diverged.stdout + diverged.stderr
    assert (
        "node 'each[1]': diverged from the recording: it asked 'triage' for reply 1 in this "
        "node; the recorded run had 0 model call(s) here"
    ) in diverged.stdout


def _replays_whole(
    plait: PlaitRunner, recording: Path, spec: Path, replay_env: dict[str, str]
) -> None:
    """``recording`` replays to the recorded outcome and path, using all it holds."""
    replayed = plait("replay", recording, "--spec", spec, env=replay_env)
    assert replayed.code == 0, replayed.stdout + replayed.stderr
    assert re.search(rf"[✓~] {re.escape(str(recording))}  success, 2 steps\n", replayed.stdout)
    assert "diverged" not in replayed.stdout
    assert "not asked for" not in replayed.stdout
    assert not Path(replay_env["REPLAY_CALLS"]).exists()


def test_recordings_that_keep_a_maps_calls_together_still_replay(
    plait: PlaitRunner, spec: Path, replay_env: dict[str, str], tmp_path: Path, database_url: str
) -> None:
    thread = started_thread(plait, spec, "-i", INPUT, env=replay_env)
    data = _record(plait, spec, replay_env, thread, tmp_path / "items.json")
    Path(replay_env["REPLAY_CALLS"]).unlink()
    # As the Plait before wrote it: every item's calls under the map's path, in call order.
    for call in [*data["model_calls"], *data["tool_calls"]]:
        call["node"] = call["node"].partition("[")[0]
    _replays_whole(plait, _write(data, tmp_path / "together.json"), spec, replay_env)

    # As a Plait before paths wrote it: node ids (the map's), no `node_keys`.
    del data["node_keys"]
    _replays_whole(plait, _write(data, tmp_path / "by-id.json"), spec, replay_env)

    # A thread whose records such a Plait made: the map's id, no path beside it.
    with psycopg.connect(database_url, autocommit=True) as conn:
        like = f"%{thread}"
        conn.execute("UPDATE plait_tool_results SET path = NULL WHERE thread_id LIKE %s", (like,))
        conn.execute(
            "UPDATE plait_audit SET detail = detail - 'path' WHERE thread_id LIKE %s", (like,)
        )
    older = _record(plait, spec, replay_env, thread, tmp_path / "older.json")
    assert {call["node"] for call in older["model_calls"]} == {"each"}
    assert {call["node"] for call in older["tool_calls"]} == {"look"}
    _replays_whole(plait, tmp_path / "older.json", spec, replay_env)
