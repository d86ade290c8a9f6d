"""``plait record`` and ``plait replay`` of a thread whose nodes `classify` (a model) and
`lookup` (a python tool) run at the top, in subgraph `office` and in each item of map `each`
over the same child: each keeps its own recorded calls under its path, a replay calls
nothing, and a changed call diverges naming the node's path (exit 6). Threads and files
from before paths were kept are refused, naming the places their nodes could be."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from tests.integration.cli.conftest import PlaitRunner, copied_spec, started_thread

INPUT = '{"message": "A-1", "messages": ["A-2", "A-3"]}'


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    return copied_spec(tmp_path, "replay_paths", "paths.yaml")


def _recorded(plait: PlaitRunner, spec: Path, replay_env: dict[str, str], target: Path) -> None:
    thread = started_thread(plait, spec, "-i", INPUT, env=replay_env)
    recorded = plait("record", thread, "--spec", spec, "-o", target, env=replay_env)
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    assert "success, 4 steps, 4 model replies, 4 tool results, 0 decisions" in recorded.stdout


def test_nodes_of_one_id_keep_their_own_calls_and_a_divergence_names_the_path(
    plait: PlaitRunner, spec: Path, replay_env: dict[str, str], tmp_path: Path
) -> None:
    recording = tmp_path / "paths.recording.json"
    _recorded(plait, spec, replay_env, recording)
    data = json.loads(recording.read_text(encoding="utf-8"))
    assert data["node_keys"] == "path"
    # The map's two items run at once: their calls are in the file in the order they ran.
    models = [
        (call["node"], json.loads(call["reply"]["content"])["kind"]) for call in data["model_calls"]
    ]
    assert models[:2] == [("classify", "question"), ("office/classify", "refund")]
    assert sorted(models[2:]) == [("each[0]/classify", "exchange"), ("each[1]/classify", "refund")]
    tools = [(call["node"], call["args"]["order_id"]) for call in data["tool_calls"]]
    assert tools[:2] == [("lookup", "A-1"), ("office/lookup", "desk A-1")]
    assert sorted(tools[2:]) == [("each[0]/lookup", "A-2"), ("each[1]/lookup", "A-3")]
    Path(replay_env["REPLAY_CALLS"]).unlink()

    replayed = plait("replay", recording, "--spec", spec, env=replay_env)

    assert replayed.code == 0, replayed.stdout + replayed.stderr
    assert f"✓ {recording}  success, 4 steps" in replayed.stdout
    assert not Path(replay_env["REPLAY_CALLS"]).exists()  # no tool was called

    # Version 1.0.1 sends `office` another message: its own `lookup` asks for another order.
    text = spec.read_text(encoding="utf-8")
    edited = text.replace('version: "1.0.0"', 'version: "1.0.1"').replace(
        "'desk ' + state.message", "'office ' + state.message"
    )
    against = spec.with_name("paths-1.0.1.yaml")
    against.write_text(edited, encoding="utf-8")

    changed = plait("replay", recording, "--spec", spec, "--against", against, env=replay_env)

    assert changed.code == 6, changed.stdout + changed.stderr
    assert (
        "node 'office/lookup': diverged from the recording: it called tool 'lookup_order' "
        "with {'order_id': 'office A-1'}; the recording called it with {'order_id': 'desk A-1'}"
    ) in changed.stdout
    assert "not asked for: 2 recorded model reply(ies), 3 tool result(s)" in changed.stdout


def test_threads_and_files_from_before_paths_are_refused_where_nodes_share_an_id(
    plait: PlaitRunner, spec: Path, replay_env: dict[str, str], tmp_path: Path, database_url: str
) -> None:
    recording = tmp_path / "paths.recording.json"
    _recorded(plait, spec, replay_env, recording)
    # The same file as an older Plait wrote it: node ids, no `node_keys`.
    data = json.loads(recording.read_text(encoding="utf-8"))
    del data["node_keys"]
    for call in [*data["model_calls"], *data["tool_calls"]]:
        call["node"] = call["node"].rpartition("/")[2]
    older = tmp_path / "older.recording.json"
    older.write_text(json.dumps(data), encoding="utf-8")
    could_be = (
        "node `classify` could be `classify`, `office/classify` or `each[i]/classify`; node "
        "`lookup` could be `lookup`, `office/lookup` or `each[i]/lookup` (`[i]`: an item of "
        "that map, which one is not known): a replay could not tell their recorded calls "
        "apart; record a new run"
    )

    refused = plait("replay", older, "--spec", spec, env=replay_env)

    assert refused.code != 0, refused.stdout + refused.stderr
    assert f"{older}: it was recorded on a Plait that kept only the id" in refused.stderr
    assert could_be in refused.stderr

    # A thread whose records an older Plait made: no path beside the node's id.
    thread = started_thread(plait, spec, "-i", INPUT, env=replay_env)
    with psycopg.connect(database_url, autocommit=True) as conn:
        like = f"%{thread}"
        conn.execute("UPDATE plait_tool_results SET path = NULL WHERE thread_id LIKE %s", (like,))
        conn.execute(
            "UPDATE plait_audit SET detail = detail - 'path' WHERE thread_id LIKE %s", (like,)
        )

    kept_ids = plait("record", thread, "--spec", spec, env=replay_env)

    assert kept_ids.code != 0, kept_ids.stdout + kept_ids.stderr
    assert f"thread '{thread}' ran on a Plait that kept only the id" in kept_ids.stderr
    assert could_be in kept_ids.stderr
