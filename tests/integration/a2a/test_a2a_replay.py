"""A thread whose ``a2a`` node talked to a real remote agent, recorded and replayed with the
remote stopped.

The caller (``specs/a2a-expense-caller.yaml``) runs with ``plait run`` against a real
``plait serve`` serving the expense agent over HTTP on 127.0.0.1. The claim needs the
remote's approval, so the conversation has two turns: the remote asks, the run's
decision answers, the remote settles. ``plait record`` keeps what the remote answered;
then the remote is stopped, so a replay that sent it anything would fail to connect.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from plait.engine.compiler import compile_spec
from plait.engine.run import Recording, ReplayResult, counting_usage, replay_recording
from plait.engine.spec import LoadedSpec, load_spec
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

CALLER = SPECS / "a2a-expense-caller.yaml"
PEER_SOURCES = [SPECS / "a2a-expense-agent.yaml", SPECS / "plait_examples"]
CLAIM = "Team dinner 750"


@pytest.fixture(scope="module")
def recorded(
    postgres_server_url: str, database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Recorded:
    """The caller's run on the session database, recorded once its remote agent stopped."""
    work = tmp_path_factory.mktemp("a2a-replay")
    env = plait_env(database_url)
    with fresh_cluster(postgres_server_url, work, PEER_SOURCES) as peer:
        agent_url = agent_base(peer, EXPENSE_AGENT)
        thread = run_caller(env, CALLER, {"agent_url": agent_url, "request": CLAIM})
    path = work / "claim.recording.json"
    data, printed = record_to(env, thread, CALLER, path)
    assert "1 steps, 0 model replies, 0 tool results, 2 remote agent replies, 1 decisions" in (
        printed
    )
    return Recorded(path, data, agent_url, env)


async def _replay(loaded: LoadedSpec, recording: Recording, database_url: str) -> ReplayResult:
    async with await open_pool(database_url, max_size=2) as pool:
        with counting_usage():
            return await replay_recording(loaded, compile_spec, pool, recording)


def _edited(source: Path, folder: Path, old: str, new: str) -> LoadedSpec:
    """``source`` as version 1.0.1 with ``old`` replaced by ``new``."""
    text = source.read_text(encoding="utf-8")
    assert old in text
    edited = folder / source.name
    edited.write_text(
        text.replace('version: "1.0.0"', 'version: "1.0.1"').replace(old, new), encoding="utf-8"
    )
    return load_spec(edited)


def test_the_recording_holds_every_turn_the_remote_answered(recorded: Recorded) -> None:
    (call,) = recorded.data["a2a_calls"]
    assert call["node"] == "file_claim"
    assert call["args"] == {"agent": recorded.agent_url, "message": CLAIM, "data": None}
    asked, settled = call["turns"]
    assert asked["decision"] is None
    assert asked["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert settled["decision"] == {"decision": "approve", "comment": "team offsite"}
    assert settled["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert settled["task"]["id"] == asked["task"]["id"]  # one remote task, continued
    expected = recorded.data["expected"]
    assert expected["outcome"] == "success"
    assert expected["state"]["remote"]["data"]["settlement"]["comment"] == "team offsite"


async def test_a_replay_gets_the_remotes_answers_with_the_remote_stopped(
    recorded: Recorded, database_url: str
) -> None:
    async with httpx.AsyncClient(timeout=5.0) as http:
        with pytest.raises(httpx.ConnectError):  # nothing answers there any more
            await http.get(recorded.agent_url)
    recording = Recording.from_json(recorded.data)

    result = await _replay(load_spec(CALLER), recording, database_url)

    assert (result.changes, result.failed) == ([], False)
    assert result.ending.outcome == recording.expected.outcome == "success"
    assert result.ending.steps == recording.expected.steps == ["file_claim"]
    assert result.ending.state == recording.expected.state
    assert result.unused == (0, 0, 0)

    replayed = run_plait(recorded.env, "replay", recorded.path, "--spec", CALLER)

    assert replayed.code == 0, replayed.stdout + replayed.stderr
    assert f"✓ {recorded.path}  success, 1 steps" in replayed.stdout
    assert "1 unchanged path(s), 0 changed" in replayed.stdout


async def test_a_replay_that_sends_the_remote_another_message_diverges_there(
    recorded: Recorded, database_url: str, tmp_path: Path
) -> None:
    reworded = _edited(CALLER, tmp_path, '"{{ state.request }}"', '"Claim: {{ state.request }}"')

    result = await _replay(reworded, Recording.from_json(recorded.data), database_url)

    assert result.failed
    assert result.ending.outcome == "failed"
    assert result.changes[0] == (
        f"node 'file_claim': diverged from the recording: it sent {recorded.agent_url!r} the "
        f"message 'Claim: {CLAIM}'; the recording sent it {CLAIM!r}"
    )
    assert result.unused == (0, 0, 2)


async def test_a_replay_that_answers_the_remote_otherwise_diverges_there(
    recorded: Recorded, database_url: str
) -> None:
    recording = Recording.from_json(recorded.data)
    rejected = replace(recording, decisions=[{"decision": "reject"}])

    result = await _replay(load_spec(CALLER), rejected, database_url)

    assert result.failed
    assert result.changes[0] == (
        "node 'file_claim': diverged from the recording: it answered the remote task with "
        "{'decision': 'reject'}; the recording answered {'decision': 'approve', "
        "'comment': 'team offsite'}"
    )
    assert result.unused == (0, 0, 1)  # the remote's settled task was never asked for
