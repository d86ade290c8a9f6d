"""Runs created beside a worker with room start on it at once (server/workers/direct_start.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plait.engine.store.pool import Pool
from plait.server.graphs import versions
from plait.server.queue import threads
from plait.server.queue.runs import Run
from plait.server.workers.direct_start import create_and_start
from plait.server.workers.worker import Worker
from tests.integration.server.worker.conftest import (
    SPECS_DIR,
    WAIT_SECONDS,
    calls,
    events_of,
    file_appears,
    run_reaches,
    running_worker,
)
from tests.polling import until

pytestmark = pytest.mark.postgres


async def _queue_idle(worker: Worker) -> None:
    """Wait until the worker found the queue empty (it starts runs directly only then)."""

    async def idle() -> bool:
        return worker.queue_idle

    await until(idle, "the worker to find the queue empty")


async def _start(pool: Pool, worker: Worker, graph: str, folder: Path) -> Run:
    version = await versions.get_version(pool, graph, "1.0.0", specs_dir=SPECS_DIR)
    assert version is not None
    thread = await threads.create_thread(pool)
    async with create_and_start(worker, pool, thread_id=thread["thread_id"]) as creation:
        await creation.lock()
        await creation.insert(
            graph=version,
            kwargs={"input": {"folder": str(folder)}},
            metadata={},
            multitask_strategy="reject",
        )
    run, created = creation.created()
    assert created
    return run


async def test_a_run_starts_on_the_worker_beside_it_and_runs_to_its_end(
    wpool: Pool, tmp_path: Path
) -> None:
    async with running_worker(wpool, concurrency=2) as worker:
        await _queue_idle(worker)
        run = await _start(wpool, worker, "worker-steps", tmp_path)
        assert (run.status, run.lease_owner, run.attempt) == ("running", worker.worker_id, 1)
        assert worker.active_runs == [run.run_id]
        await file_appears(tmp_path / "two.started")
        (tmp_path / "two.go").touch()
        ended = await run_reaches(wpool, run.run_id, "success", "error")

    assert ended.status == "success"
    assert calls(tmp_path) == ["one", "two", "three"]
    events = await events_of(wpool, run.run_id)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert events[0].event == "metadata" and events[-1].event == "end"


async def test_a_full_worker_leaves_the_run_queued_and_claims_it_when_a_slot_frees(
    wpool: Pool, tmp_path: Path
) -> None:
    first_folder, second_folder = tmp_path / "first", tmp_path / "second"
    first_folder.mkdir()
    second_folder.mkdir()
    async with running_worker(wpool, concurrency=1) as worker:
        await _queue_idle(worker)
        first = await _start(wpool, worker, "worker-steps", first_folder)
        assert first.status == "running"
        await file_appears(first_folder / "two.started")
        second = await _start(wpool, worker, "worker-steps", second_folder)
        assert (second.status, second.lease_owner) == ("pending", None)
        (first_folder / "two.go").touch()
        (second_folder / "two.go").touch()
        async with asyncio.timeout(WAIT_SECONDS):
            done = [
                await run_reaches(wpool, run.run_id, "success", "error") for run in (first, second)
            ]
        # No slot was kept for the queued run: the worker took it through a claim,
        # and once the queue is empty again it has room for the next direct start.
        await _queue_idle(worker)
        assert worker.reserve_direct() is not None
        worker.release_reserved()

    assert [run.status for run in done] == ["success", "success"]
    assert done[1].attempt == 1
