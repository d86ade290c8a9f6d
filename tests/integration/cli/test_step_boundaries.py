"""A run killed at any step boundary continues from there: no finished step lost or run again.

``gated.yaml`` is a -> (b1 | b2) -> c -> d, each node waiting at a gate file.
For each boundary the test opens the gates of the steps before it, SIGKILLs
``plait run`` once the next step has started (so the steps before it are
finished, and the next has done nothing), opens every gate and continues the
thread. Each step writes its task writes with its checkpoint in one round
trip (``StepSaver``); this is what must still hold.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from tests.integration.cli.conftest import PLAIT, TEST_SPECS, PlaitRunner, plait_env
from tests.integration.gated import NODES, STEPS, open_gates
from tests.integration.killed_runs import run_until_killed
from tests.polling import DEADLINE_SECONDS, POLL_SECONDS

GATED = TEST_SPECS / "gated.yaml"


@pytest.mark.parametrize("finished", range(len(STEPS)), ids=lambda n: f"after-{n}-steps")
def test_a_run_killed_at_a_step_boundary_loses_and_repeats_nothing(
    plait: PlaitRunner, database_url: str, tmp_path: Path, finished: int
) -> None:
    log, gates = tmp_path / "log", open_gates(tmp_path / "gates", STEPS[:finished])
    thread = f"boundary-{uuid.uuid4()}"
    payload = json.dumps({"log": str(log), "gates": str(gates)})
    waiting = set(STEPS[finished])
    started: set[str] = set()

    def next_step_started(event: dict[str, object]) -> bool:
        if event["event"] == "node_started" and event["node"] in waiting:
            started.add(str(event["node"]))
        return started == waiting

    seen = run_until_killed(
        [*PLAIT, "run", str(GATED), "--input", payload, "--thread", thread, "--json"],
        plait_env(database_url),
        stop_at=next_step_started,
        what=f"step {finished + 1} started",
    )
    done_before = [node for step in STEPS[:finished] for node in step]
    assert sorted(e["node"] for e in seen if e["event"] == "node_finished") == sorted(done_before)

    for node in NODES:
        (gates / node).touch()
    continued = plait("run", GATED, "--thread", thread, "--json")

    assert continued.code == 0, continued.stderr
    events = continued.events()
    rerun = [e["node"] for e in events if e["event"] == "node_finished"]
    assert sorted(rerun) == sorted(NODES[len(done_before) :])
    final = events[-1]
    assert final["event"] == "completed"
    assert in_steps(final["output"]["steps"]) == STEPS
    # Every node's side effect happened exactly once, across both processes.
    assert sorted(log.read_text().split()) == sorted(NODES)


def test_a_finished_task_of_an_unfinished_step_is_not_run_again(
    plait: PlaitRunner, database_url: str, tmp_path: Path
) -> None:
    """b1 finished, b2 still waits: b1's writes are stored on their own, so it never reruns."""
    log, gates = tmp_path / "log", tmp_path / "gates"
    gates.mkdir()
    for node in ("a", "b1"):
        (gates / node).touch()
    thread = f"boundary-{uuid.uuid4()}"
    payload = json.dumps({"log": str(log), "gates": str(gates)})

    def b1_stored(event: dict[str, object]) -> bool:
        if event["event"] != "node_finished" or event["node"] != "b1":
            return False
        # The process goes on (b2 waits): wait for b1's writes to be in the database.
        deadline = time.monotonic() + DEADLINE_SECONDS
        with psycopg.connect(database_url, autocommit=True) as conn:
            while not conn.execute(
                "SELECT 1 FROM checkpoint_writes WHERE thread_id = %s AND task_path LIKE %s",
                (thread, "%b1%"),
            ).fetchone():
                assert time.monotonic() < deadline, "b1's writes were never stored"
                time.sleep(POLL_SECONDS)
        return True

    run_until_killed(
        [*PLAIT, "run", str(GATED), "--input", payload, "--thread", thread, "--json"],
        plait_env(database_url),
        stop_at=b1_stored,
        what="b1 finished",
    )
    for node in NODES:
        (gates / node).touch()
    continued = plait("run", GATED, "--thread", thread, "--json")

    assert continued.code == 0, continued.stderr
    events = continued.events()
    # (LangGraph still announces b1's task, whose stored writes it reuses: no finish.)
    assert [e["node"] for e in events if e["event"] == "node_finished"] == ["b2", "c", "d"]
    assert in_steps(events[-1]["output"]["steps"]) == STEPS
    assert sorted(log.read_text().split()) == sorted(NODES)


def in_steps(done: list[str]) -> list[tuple[str, ...]]:
    """``done`` cut into the graph's steps, each step's nodes sorted (b1, b2 in any order)."""
    cut, at = [], 0
    for step in STEPS:
        cut.append(tuple(sorted(done[at : at + len(step)])))
        at += len(step)
    return cut if at == len(done) else [*cut, tuple(done[at:])]
