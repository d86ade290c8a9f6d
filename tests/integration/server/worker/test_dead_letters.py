"""Poison runs end: a run whose attempts keep losing their worker is dead-lettered, then requeued.

Each death is ``worker-a`` dying in the middle of the gated step (its task
cancelled, its lease left to expire: tests/integration/killed_runs.py), so the
next claim counts a lost attempt. Real Postgres, a real :class:`Worker`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from plait.engine.store.pool import Pool
from plait.server.operations import metrics
from plait.server.queue import journal, runs, threads
from tests.integration.killed_runs import worker_dies_mid_node
from tests.integration.server.worker.conftest import (
    calls,
    events_of,
    new_run,
    run_reaches,
    running_worker,
)

pytestmark = pytest.mark.postgres


async def _dies(pool: Pool, run_id: str, folder: Path, times: int) -> None:
    """``times`` attempts of the run die in step ``two``."""
    for _ in range(times):
        await worker_dies_mid_node(pool, run_id, folder / "two.started")
        (folder / "two.started").unlink()


def _dead_lettered_count(graph: str) -> float:
    value = REGISTRY.get_sample_value(
        "plait_runs_finished_total", {"graph": graph, "outcome": "dead_lettered"}
    )
    return value or 0.0


async def test_a_run_that_keeps_losing_its_worker_is_dead_lettered_then_requeued(
    wpool: Pool, tmp_path: Path
) -> None:
    run = await new_run(
        wpool, "worker-steps", input={"folder": str(tmp_path)}, stream_mode=["values"]
    )
    await _dies(wpool, run.run_id, tmp_path, 3)
    counted = _dead_lettered_count("worker-steps")

    async with running_worker(wpool, worker_id="worker-b"):  # the default: 3 lost attempts
        dead = await run_reaches(wpool, run.run_id, "error", "success")

    assert (dead.status, dead.plait_status, dead.attempt, dead.lost_attempts) == (
        "error",
        "dead_lettered",
        4,
        3,
    )
    assert dead.dead_letter is not None
    assert (dead.dead_letter["attempts"], dead.dead_letter["max_attempts"]) == (3, 3)
    assert "3 attempts in a row lost their worker" in dead.dead_letter["reason"]
    shown = dead.to_api()
    assert (shown["status"], shown["plait_status"]) == ("error", "dead_lettered")
    assert (shown["plait_state"], shown["plait_state_label"]) == ("dead_lettered", "dead lettered")
    assert shown["dead_letter"] == dead.dead_letter
    # The fourth claim ran nothing: step `two` started three times, once per death.
    assert calls(tmp_path) == ["one", "two", "two", "two"]
    events = await events_of(wpool, run.run_id)
    error, end = events[-2:]
    assert (error.event, error.data["error"], end.event) == ("error", "DeadLettered", "end")
    assert f"requeue, or plait queue requeue {run.run_id}" in error.data["message"]
    thread = await threads.get_thread(wpool, run.thread_id)
    assert thread is not None and thread["status"] == "error"
    assert _dead_lettered_count("worker-steps") == counted + 1
    assert run.run_id in {r.run_id for r in await runs.list_dead_letters(wpool)}
    gauge = next(
        m for m in await metrics.database_metrics(wpool) if m.name == "plait_runs_dead_lettered"
    )
    assert gauge.samples[0].value >= 1
    by_state = next(
        m for m in await metrics.database_metrics(wpool) if m.name == "plait_run_states"
    )
    assert {s.labels["state"]: s.value for s in by_state.samples}["dead_lettered"] >= 1

    (tmp_path / "two.go").touch()  # the cause is fixed
    requeued = await runs.requeue_run(wpool, run.run_id, run.thread_id)
    assert (requeued.status, requeued.lost_attempts, requeued.dead_letter) == ("pending", 0, None)
    assert requeued.state == "queued"
    assert requeued.queue_id > run.queue_id  # it waits behind what the thread accepted since
    async with running_worker(wpool, worker_id="worker-c"):
        done = await run_reaches(wpool, run.run_id, "success", "error")

    assert (done.status, done.plait_status, done.attempt, done.dead_letter) == (
        "success",
        "success",
        5,
        None,
    )
    assert done.state == "succeeded"
    assert calls(tmp_path) == ["one", "two", "two", "two", "two", "three"]  # from its checkpoint
    after = await events_of(wpool, run.run_id)
    assert [e.seq for e in after] == list(range(1, len(after) + 1))  # the seq went on
    assert [e.seq for e in after if e.superseded] == [error.seq, end.seq]
    assert after[len(events)].event == "metadata"
    assert after[len(events)].data == {"run_id": run.run_id, "attempt": 5}
    assert after[-1].event == "end"
    assert [e.data for e in after if e.event == "values"][-1]["steps"] == ["one", "two", "three"]

    # A stream read now goes on through the dead letter to the new end.
    listener = journal.JournalListener(wpool)
    await listener.start()
    try:
        async with contextlib.aclosing(listener.subscribe(run.run_id)) as stream:
            streamed = [(e.seq, e.event) async for e in stream]
    finally:
        await listener.stop()
    assert streamed == [(e.seq, e.event) for e in after if not e.superseded]
    assert [name for _, name in streamed].count("end") == 1
    assert "error" not in [name for _, name in streamed]


async def test_only_a_dead_lettered_run_can_be_requeued(wpool: Pool, tmp_path: Path) -> None:
    (tmp_path / "two.go").touch()
    async with running_worker(wpool):
        run = await new_run(wpool, "worker-steps", input={"folder": str(tmp_path)})
        done = await run_reaches(wpool, run.run_id, "success", "error")
    assert done.status == "success"

    with pytest.raises(runs.RunNotDeadLettered, match="success, not dead-lettered"):
        await runs.requeue_run(wpool, run.run_id)
    with pytest.raises(runs.RunNotFound):
        await runs.requeue_run(wpool, run.run_id, "another-thread")
    with pytest.raises(runs.RunNotFound):
        await runs.requeue_run(wpool, run.run_id, tenant="someone-else")


async def test_the_workers_limit_applies(wpool: Pool, tmp_path: Path) -> None:
    """``--max-attempts 1``: one death ends a run whose spec does not say."""
    run = await new_run(wpool, "worker-steps", input={"folder": str(tmp_path)})
    assert run.max_attempts is None
    await _dies(wpool, run.run_id, tmp_path, 1)

    async with running_worker(wpool, max_attempts=1):
        ended = await run_reaches(wpool, run.run_id, "error", "success")

    assert ended.plait_status == "dead_lettered"
    assert ended.dead_letter is not None and ended.dead_letter["max_attempts"] == 1


async def test_the_specs_max_attempts_wins(wpool: Pool, tmp_path: Path) -> None:
    """worker-patient's ``max_attempts: 2`` outlasts the worker's 1."""
    run = await new_run(wpool, "worker-patient", input={"folder": str(tmp_path)})
    assert run.max_attempts == 2
    await _dies(wpool, run.run_id, tmp_path, 1)
    (tmp_path / "two.go").touch()

    async with running_worker(wpool, max_attempts=1):
        survived = await run_reaches(wpool, run.run_id, "success", "error")

    # Its steps after the death reset the count: lost attempts count only in a row.
    assert (survived.status, survived.attempt, survived.lost_attempts) == ("success", 2, 0)
    assert survived.dead_letter is None
