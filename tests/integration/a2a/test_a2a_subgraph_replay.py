"""``a2a`` nodes inside subgraphs and map items, recorded from a real remote agent and
replayed with the remote stopped and their header secret unset.

The caller (``subgraph_specs/a2a-claims-caller.yaml``) runs with ``plait run`` against a
real ``plait serve`` serving the expense agent over HTTP on 127.0.0.1. Its large claim
goes through two subgraphs (``office``, then ``desk``) to the ``a2a`` node, and the remote
asks for approval before it settles; each small claim (the same text twice) goes through
the subgraph of one item of map ``small``. ``plait record`` keeps every conversation
under its node's path (``office/desk/file_claim``, ``small[0]/file_claim``, ...); then
the remote is stopped, so a replay that sent it anything would fail to connect, and the
header secret is left out, so a replay that read it would fail too.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import httpx
import pytest

from plait.engine.compiler import compile_spec
from plait.engine.run import Recording, ReplayResult, counting_usage, replay_recording
from plait.engine.spec import LoadedSpec, load_directory, load_spec
from plait.engine.store import open_pool
from tests.integration.a2a.conftest import (
    EXPENSE_AGENT,
    Recorded,
    agent_base,
    record_to,
    run_caller,
)
from tests.integration.cli.conftest import plait_env, run_plait
from tests.integration.server.harness import SPECS, fresh_cluster

pytestmark = pytest.mark.postgres

FOLDER = Path(__file__).resolve().parent / "subgraph_specs"
CALLER = FOLDER / "a2a-claims-caller.yaml"
DESK = FOLDER / "a2a-claim-desk.yaml"
PEER_SOURCES = [SPECS / "a2a-expense-agent.yaml", SPECS / "plait_examples"]
CLAIM = "Team dinner 750"
SMALL = "Taxi 42.50"
#: The desk's header secret: set for the recorded run only.
SECRET, SECRET_VALUE = "CLAIM_DESK_TOKEN", "desk-token-5f1c"
NESTED = "office/desk/file_claim"


@pytest.fixture(scope="module")
def recorded(
    postgres_server_url: str, database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Recorded:
    """The caller's run on the session database, recorded once its remote agent stopped."""
    work = tmp_path_factory.mktemp("a2a-subgraph-replay")
    env = plait_env(database_url)
    env.pop(SECRET, None)
    with fresh_cluster(postgres_server_url, work, PEER_SOURCES) as peer:
        agent_url = agent_base(peer, EXPENSE_AGENT)
        values = {"agent_url": agent_url, "request": CLAIM, "small_claims": [SMALL, SMALL]}
        thread = run_caller({**env, SECRET: SECRET_VALUE}, CALLER, values)
    path = work / "claims.recording.json"
    data, printed = record_to(env, thread, CALLER, path)
    # The large claim's two answers, and one per small claim.
    assert "2 steps, 0 model replies, 0 tool results, 4 remote agent replies, 1 decisions" in (
        printed
    ), printed
    return Recorded(path, data, agent_url, env)


async def _replay(
    caller: LoadedSpec, folder: Path, recording: Recording, database_url: str
) -> ReplayResult:
    """Replay ``recording`` on ``caller``, its subgraphs found in ``folder``."""
    registry = load_directory(folder)
    registry.add(caller)
    compile_with = functools.partial(compile_spec, registry=registry)
    async with await open_pool(database_url, max_size=2) as pool:
        with counting_usage():
            return await replay_recording(caller, compile_with, pool, recording)


def _edited(folder: Path, name: str, old: str, new: str) -> Path:
    """The specs copied to ``folder``, ``name`` with ``old`` replaced by ``new``."""
    shutil.copytree(FOLDER, folder)
    edited = folder / name
    text = edited.read_text(encoding="utf-8")
    assert old in text
    edited.write_text(text.replace(old, new), encoding="utf-8")
    return folder / CALLER.name


def test_the_recording_keeps_each_conversation_under_its_nodes_path(recorded: Recorded) -> None:
    calls = {call["node"]: call for call in recorded.data["a2a_calls"]}
    assert set(calls) == {NESTED, "small[0]/file_claim", "small[1]/file_claim"}
    assert recorded.data["tool_calls"] == []  # the turns are not taken for tool results

    nested = calls[NESTED]
    assert nested["args"] == {"agent": recorded.agent_url, "message": CLAIM, "data": None}
    asked, settled = nested["turns"]
    assert asked["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert settled["decision"] == {"decision": "approve", "comment": "team offsite"}
    assert settled["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

    # The same text from each item, two remote tasks: each item's own.
    items = [calls[f"small[{i}]/file_claim"] for i in range(2)]
    assert [item["args"]["message"] for item in items] == [SMALL, SMALL]
    (first,), (second,) = (item["turns"] for item in items)
    assert first["task"]["id"] != second["task"]["id"]
    expected = recorded.data["expected"]
    assert expected["outcome"] == "success"
    assert expected["state"]["small_reports"] == [
        f"claim paid (remote task {first['task']['id']})",
        f"claim paid (remote task {second['task']['id']})",
    ]
    assert SECRET_VALUE not in recorded.path.read_text(encoding="utf-8")


async def test_a_replay_gets_every_answer_with_the_remote_stopped_and_no_secret(
    recorded: Recorded, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with httpx.AsyncClient(timeout=5.0) as http:
        with pytest.raises(httpx.ConnectError):  # nothing answers there any more
            await http.get(recorded.agent_url)
    monkeypatch.delenv(SECRET, raising=False)
    recording = Recording.from_json(recorded.data)

    result = await _replay(load_spec(CALLER), FOLDER, recording, database_url)

    assert (result.changes, result.failed) == ([], False)
    assert result.ending.outcome == recording.expected.outcome == "success"
    assert result.ending.steps == recording.expected.steps == ["office", "small"]
    assert result.ending.state == recording.expected.state  # each item got its own task
    assert result.unused == (0, 0, 0)

    replayed = run_plait(recorded.env, "replay", recorded.path, "--spec", CALLER)

    assert replayed.code == 0, replayed.stdout + replayed.stderr
    assert f"✓ {recorded.path}  success, 2 steps" in replayed.stdout
    assert "1 unchanged path(s), 0 changed" in replayed.stdout


async def test_a_subgraph_node_that_sends_another_message_diverges_naming_its_path(
    recorded: Recorded, database_url: str, tmp_path: Path
) -> None:
    caller = _edited(
        tmp_path / "specs",
        DESK.name,
        'message: "{{ state.request }}"',
        'message: "Claim: {{ state.request }}"',
    )

    result = await _replay(
        load_spec(caller), caller.parent, Recording.from_json(recorded.data), database_url
    )

    assert result.failed
    assert result.ending.outcome == "failed"
    assert result.changes[0] == (
        f"node {NESTED!r}: diverged from the recording: it sent {recorded.agent_url!r} the "
        f"message 'Claim: {CLAIM}'; the recording sent it {CLAIM!r}"
    )
    assert result.unused == (0, 0, 4)

    replayed = run_plait(
        recorded.env, "replay", recorded.path, "--spec", CALLER, "--against", caller
    )

    assert replayed.code == 6, replayed.stdout + replayed.stderr
    assert f"✗ {recorded.path}  failed, 1 steps" in replayed.stdout
    assert f"node {NESTED!r}: diverged from the recording" in replayed.stdout


async def test_a_map_item_that_sends_another_message_diverges_naming_its_item(
    recorded: Recorded, database_url: str, tmp_path: Path
) -> None:
    caller = _edited(
        tmp_path / "specs", CALLER.name, "request: item}", "request: \"'Claim: ' + item\"}"
    )

    result = await _replay(
        load_spec(caller), caller.parent, Recording.from_json(recorded.data), database_url
    )

    assert result.failed
    assert result.changes[0] == (
        "node 'small[0]/file_claim': diverged from the recording: it sent "
        f"{recorded.agent_url!r} the message 'Claim: {SMALL}'; the recording sent it {SMALL!r}"
    )
