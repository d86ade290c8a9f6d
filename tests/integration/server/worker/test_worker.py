"""The worker on real Postgres: execution, journal, interrupts, cancellation, reclaim."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from plait.engine.store.pool import Pool
from plait.server.approvals import records
from plait.server.queue import runs, threads
from plait.server.workers.execution import GraphCache
from plait.server.workers.worker import Worker
from tests.integration.killed_runs import worker_dies_mid_node
from tests.integration.server.worker.conftest import (
    SPECS_DIR,
    calls,
    events_of,
    file_appears,
    new_run,
    run_reaches,
    running_worker,
)
from tests.polling import until

pytestmark = pytest.mark.postgres


async def test_a_run_is_executed_and_journaled_in_order(wpool: Pool, tmp_path: Path) -> None:
    (tmp_path / "two.go").touch()
    async with running_worker(wpool, concurrency=2):
        run = await new_run(
            wpool,
            "worker-steps",
            input={"folder": str(tmp_path)},
            stream_mode=["values", "updates"],
        )
        finished = await run_reaches(wpool, run.run_id, "success", "error")

    assert (finished.status, finished.error, finished.attempt) == ("success", None, 1)
    events = await events_of(wpool, run.run_id)
    names = [event.event for event in events]
    assert [event.seq for event in events] == list(range(1, len(events) + 1))
    assert names[0] == "metadata" and names[-1] == "end"
    assert events[0].data == {"run_id": run.run_id, "attempt": 1}
    assert set(names[1:-1]) == {"values", "updates"}
    updated = [next(iter(e.data)) for e in events if e.event == "updates"]
    assert updated == ["one", "two", "three"]
    last_values = [e.data for e in events if e.event == "values"][-1]
    assert last_values["steps"] == ["one", "two", "three"]
    assert calls(tmp_path) == ["one", "two", "three"]
    thread = await threads.get_thread(wpool, run.thread_id)
    assert thread is not None and thread["status"] == "idle"


async def test_only_requested_modes_are_journaled(wpool: Pool, tmp_path: Path) -> None:
    (tmp_path / "two.go").touch()
    async with running_worker(wpool):
        run = await new_run(
            wpool,
            "worker-steps",
            input={"folder": str(tmp_path)},
            stream_mode="updates",
            stream_subgraphs=True,
        )
        await run_reaches(wpool, run.run_id, "success")

    names = [event.event for event in await events_of(wpool, run.run_id)]
    assert names == ["metadata", "updates", "updates", "updates", "end"]


async def test_a_failing_node_ends_the_run_with_an_error_event(wpool: Pool, tmp_path: Path) -> None:
    async with running_worker(wpool):
        run = await new_run(wpool, "worker-fails", input={"folder": str(tmp_path)})
        finished = await run_reaches(wpool, run.run_id, "success", "error")

    assert finished.status == "error"
    assert finished.error is not None and "the step exploded" in finished.error
    events = await events_of(wpool, run.run_id)
    assert [e.event for e in events][-2:] == ["error", "end"]
    assert "the step exploded" in events[-2].data["message"]
    thread = await threads.get_thread(wpool, run.thread_id)
    assert thread is not None and thread["status"] == "error"


async def test_an_interrupt_parks_the_thread_and_a_command_resumes_it(
    wpool: Pool, tmp_path: Path
) -> None:
    async with running_worker(wpool):
        first = await new_run(
            wpool, "worker-approval", input={"folder": str(tmp_path)}, stream_mode=["updates"]
        )
        parked = await run_reaches(wpool, first.run_id, "success", "error")
        assert parked.status == "success"
        thread = await threads.get_thread(wpool, first.thread_id)
        assert thread is not None and thread["status"] == "interrupted"
        [approval] = await records.list_approvals(wpool, "pending", thread_id=first.thread_id)
        assert (approval["node"], approval["action"], approval["run_id"]) == (
            "approve",
            "ship_it",
            first.run_id,
        )
        assert approval["arguments"] == {"folder": str(tmp_path)}
        interrupt_events = [
            e.data["__interrupt__"]
            for e in await events_of(wpool, first.run_id)
            if e.event == "updates" and "__interrupt__" in e.data
        ]
        assert interrupt_events == [
            [{"id": approval["interrupt_id"], "value": interrupt_events[0][0]["value"]}]
        ]
        assert interrupt_events[0][0]["value"]["kind"] == "approval"

        second = await new_run(
            wpool,
            "worker-approval",
            thread_id=first.thread_id,
            command={"resume": {"decision": "approve", "comment": "ok"}},
        )
        resumed = await run_reaches(wpool, second.run_id, "success", "error")

    assert resumed.status == "success"
    assert calls(tmp_path) == ["prepare", "done"]
    thread = await threads.get_thread(wpool, first.thread_id)
    assert thread is not None and thread["status"] == "idle"
    decided = await records.get_approval(wpool, approval["approval_id"])
    assert decided is not None and decided["status"] == "approved"


async def test_only_values_requested_still_shows_the_interrupt(wpool: Pool, tmp_path: Path) -> None:
    async with running_worker(wpool):
        run = await new_run(wpool, "worker-approval", input={"folder": str(tmp_path)})
        await run_reaches(wpool, run.run_id, "success")

    events = await events_of(wpool, run.run_id)
    assert {e.event for e in events} == {"metadata", "values", "end"}
    assert "__interrupt__" in events[-2].data


async def test_cancel_interrupt_stops_a_blocked_run(wpool: Pool, tmp_path: Path) -> None:
    async with running_worker(wpool, lease_seconds=0.6) as worker:
        run = await new_run(wpool, "worker-steps", input={"folder": str(tmp_path)})
        await file_appears(tmp_path / "two.started")
        assert worker.active_runs == [run.run_id]

        await runs.cancel_run(wpool, run.thread_id, run.run_id, "interrupt")
        stopped = await run_reaches(wpool, run.run_id, "interrupted", "success", "error")

    assert stopped.status == "interrupted"
    assert calls(tmp_path) == ["one", "two"]
    events = await events_of(wpool, run.run_id)
    assert events[-1].event == "end"
    thread = await threads.get_thread(wpool, run.thread_id)
    assert thread is not None and thread["status"] == "idle"


async def test_a_blocking_sync_step_neither_stalls_the_worker_nor_the_cancel(
    wpool: Pool, tmp_path: Path
) -> None:
    # Sync node functions run in a thread in a worker: its loop keeps heartbeating
    # (a 0.6 s lease would otherwise expire) and a cancel stops the run at once.
    async with running_worker(wpool, lease_seconds=0.6):
        run = await new_run(wpool, "worker-sync-steps", input={"folder": str(tmp_path)})
        await file_appears(tmp_path / "two.started")
        await runs.cancel_run(wpool, run.thread_id, run.run_id, "interrupt")
        async with asyncio.timeout(5):
            stopped = await run_reaches(wpool, run.run_id, "interrupted", "success", "error")
        (tmp_path / "two.go").touch()  # lets the abandoned thread end

    assert stopped.status == "interrupted"
    assert stopped.attempt == 1  # never taken over: the lease was renewed meanwhile
    assert calls(tmp_path) == ["one", "two"]


async def test_rollback_deletes_the_run_and_its_checkpoints(wpool: Pool, tmp_path: Path) -> None:
    (tmp_path / "two.go").touch()
    async with running_worker(wpool, lease_seconds=0.6):
        done = await new_run(wpool, "worker-steps", input={"folder": str(tmp_path)})
        await run_reaches(wpool, done.run_id, "success")
        (tmp_path / "two.go").unlink()
        (tmp_path / "two.started").unlink()
        before = await _checkpoint_ids(wpool, done.thread_id)

        doomed = await new_run(
            wpool, "worker-steps", thread_id=done.thread_id, input={"folder": str(tmp_path)}
        )
        await file_appears(tmp_path / "two.started")
        assert len(await _checkpoint_ids(wpool, done.thread_id)) > len(before)
        await runs.cancel_run(wpool, doomed.thread_id, doomed.run_id, "rollback")

        async def deleted() -> bool:
            return await runs.get_run(wpool, doomed.run_id) is None

        await until(deleted, "the rolled-back run to be deleted")

    assert await _checkpoint_ids(wpool, done.thread_id) == before
    kept = await runs.get_run(wpool, done.run_id)
    assert kept is not None and kept.status == "success"


async def test_an_expired_lease_is_continued_by_another_worker(wpool: Pool, tmp_path: Path) -> None:
    run = await new_run(wpool, "worker-steps", input={"folder": str(tmp_path)})
    await worker_dies_mid_node(wpool, run.run_id, tmp_path / "two.started")
    (tmp_path / "two.go").touch()

    async with running_worker(wpool, worker_id="worker-b"):
        finished = await run_reaches(wpool, run.run_id, "success", "error")

    assert (finished.status, finished.attempt) == ("success", 2)
    assert calls(tmp_path) == ["one", "two", "two", "three"]  # `one` finished before: not again
    events = await events_of(wpool, run.run_id)
    metadata = [e.data for e in events if e.event == "metadata"]
    assert metadata == [
        {"run_id": run.run_id, "attempt": 1},
        {"run_id": run.run_id, "attempt": 2},
    ]
    assert [e.event for e in events].count("end") == 1


async def _checkpoint_ids(pool: Pool, thread_id: str) -> list[str]:
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s ORDER BY checkpoint_id",
            (thread_id,),
        )
        return [row["checkpoint_id"] for row in await cursor.fetchall()]


async def test_message_chunks_are_journaled_as_the_sdk_reads_them(wpool: Pool) -> None:
    async with running_worker(wpool):
        run = await new_run(
            wpool, "worker-chat", input={"question": "What is it?"}, stream_mode=["messages-tuple"]
        )
        await run_reaches(wpool, run.run_id, "success")

    events = await events_of(wpool, run.run_id)
    chunks = [e.data for e in events if e.event == "messages"]
    assert len(chunks) > 1  # streamed, not one message
    assert {message["type"] for message, _ in chunks} == {"AIMessageChunk"}
    assert "".join(message["content"] for message, _ in chunks) == "The answer is forty two."
    assert {metadata["langgraph_node"] for _, metadata in chunks} == {"reply"}
    assert {metadata["plait_graph"] for _, metadata in chunks} == {"worker-chat"}


async def test_a_worker_executes_up_to_its_concurrency_at_once(wpool: Pool, tmp_path: Path) -> None:
    folders = [tmp_path / name for name in ("a", "b", "c")]
    for folder in folders:
        folder.mkdir()
    async with running_worker(wpool, concurrency=2) as worker:
        first, second, third = [
            await new_run(wpool, "worker-steps", input={"folder": str(folder)})
            for folder in folders
        ]
        await file_appears(folders[0] / "two.started")
        await file_appears(folders[1] / "two.started")
        assert sorted(worker.active_runs) == sorted([first.run_id, second.run_id])
        waiting = await runs.get_run(wpool, third.run_id)
        assert waiting is not None and waiting.status == "pending"

        (folders[0] / "two.go").touch()
        await file_appears(folders[2] / "two.started")  # the freed slot takes the third
        for folder in folders[1:]:
            (folder / "two.go").touch()
        for run in (first, second, third):
            await run_reaches(wpool, run.run_id, "success")


async def test_a_run_past_its_spec_timeout_ends_timeout(wpool: Pool, tmp_path: Path) -> None:
    async with running_worker(wpool):
        run = await new_run(wpool, "worker-slow", input={"folder": str(tmp_path)})
        finished = await run_reaches(wpool, run.run_id, "timeout", "success", "error")

    assert finished.status == "timeout"
    events = await events_of(wpool, run.run_id)
    assert [e.event for e in events][-2:] == ["error", "end"]
    assert events[-2].data == {
        "error": "TimeoutError",
        "message": "the run exceeded its timeout of 0.3s (spec.timeout)",
    }


async def test_a_cancel_is_seen_at_once_not_at_the_next_heartbeat(
    wpool: Pool, tmp_path: Path
) -> None:
    # A 60 s lease heartbeats every 20 s: only the queue's notification can stop it in time.
    async with running_worker(wpool, lease_seconds=60.0):
        run = await new_run(wpool, "worker-steps", input={"folder": str(tmp_path)})
        await file_appears(tmp_path / "two.started")
        await runs.cancel_run(wpool, run.thread_id, run.run_id, "interrupt")
        async with asyncio.timeout(5):
            stopped = await run_reaches(wpool, run.run_id, "interrupted", "success", "error")

    assert stopped.status == "interrupted"


@pytest.mark.parametrize("action", ["interrupt", "rollback"])
async def test_a_run_claimed_with_a_cancel_asked_stops_before_running(
    wpool: Pool, tmp_path: Path, action: str
) -> None:
    (tmp_path / "two.go").touch()  # left alone, the run would finish all three steps
    run = await new_run(wpool, "worker-steps", input={"folder": str(tmp_path)})
    [claimed] = await runs.claim_runs(wpool, "died", 1, -1.0)  # its lease is already over
    assert claimed.run_id == run.run_id
    # Asked of the dead worker, which will never heartbeat to see it.
    await runs.cancel_run(wpool, run.thread_id, run.run_id, action)

    # A 60 s lease heartbeats every 20 s: only acting on the claim stops it in time.
    async with running_worker(wpool, lease_seconds=60.0):
        async with asyncio.timeout(5):
            if action == "interrupt":
                stopped = await run_reaches(wpool, run.run_id, "interrupted", "success", "error")
                assert (stopped.status, stopped.attempt) == ("interrupted", 2)
            else:

                async def deleted() -> bool:
                    return await runs.get_run(wpool, run.run_id) is None

                await until(deleted, "the rolled-back run to be deleted")

    assert calls(tmp_path) == []  # not one node ran
    thread = await threads.get_thread(wpool, run.thread_id)
    assert thread is not None and thread["status"] == "idle"
    if action == "interrupt":
        events = await events_of(wpool, run.run_id)
        assert [e.event for e in events] == ["metadata", "metadata", "end"]


async def test_the_graph_cache_keeps_at_most_its_size(wpool: Pool) -> None:
    cache = GraphCache(wpool, SPECS_DIR, size=2)
    names = ("worker-steps", "worker-chat", "worker-fails")
    compiled = [await cache.get(name, "1.0.0") for name in names]
    assert [spec.loaded.name for spec in compiled] == list(names)
    assert len(cache) == 2
    # An evicted version is read and compiled again when a run needs it.
    assert (await cache.get("worker-steps", "1.0.0")).loaded.name == "worker-steps"
    assert len(cache) == 2


async def test_a_full_worker_claims_queued_runs_a_few_at_a_time(
    wpool: Pool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With runs queued, each run that ends frees one slot; claimed alone, every run cost a
    # claim of its own (a transaction, an advisory lock and a ranking query): 0.84 claims
    # a run at 200 runs at once (bench/statements.py --levels 10,200).
    claims: list[int] = []
    claim_runs = runs.claim_runs

    async def counted(*args: Any, **kwargs: Any) -> list[runs.Run]:
        claimed = await claim_runs(*args, **kwargs)
        claims.append(len(claimed))
        return claimed

    monkeypatch.setattr(runs, "claim_runs", counted)
    folders = [tmp_path / str(number) for number in range(10)]
    queued = []
    for folder in folders:
        folder.mkdir()
        queued.append(await new_run(wpool, "worker-steps", input={"folder": str(folder)}))

    # A linger longer than the test: a slot freed alone is never claimed alone.
    async with running_worker(wpool, concurrency=8, claim_linger_seconds=600.0) as worker:
        await until(lambda: _started(folders, 8), "the worker to fill its eight slots")
        running = [folder for folder in folders if (folder / "two.started").exists()]
        assert claims == [8]
        first, second = running[:2]
        (first / "two.go").touch()
        ended = queued[folders.index(first)].run_id
        await run_reaches(wpool, ended, "success")
        await until(lambda: _gone(worker, ended), "the ended run to free its slot")
        (second / "two.go").touch()
        await until(lambda: _started(folders, 10), "the two queued runs to start")
        assert claims == [8, 2]  # the two freed slots, claimed together
        for folder in folders:
            (folder / "two.go").touch()
        for run in queued:
            assert (await run_reaches(wpool, run.run_id, "success", "error")).status == "success"


async def _started(folders: list[Path], count: int) -> bool:
    return sum((folder / "two.started").exists() for folder in folders) == count


async def _gone(worker: Worker, run_id: str) -> bool:
    return run_id not in worker.active_runs
