"""Priorities and expiry of queued runs, measured with two real workers on real Postgres.

Claims order a tenant's runs by priority aged by their wait, inside the
tenants' fair turns (server/queue/queueing.py); a pending run past its
deadline never runs and ends ``expired`` (docs/decisions.md 91).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from plait.engine.store.pool import Pool
from plait.server.auth import store
from plait.server.graphs import versions
from plait.server.queue import crons, journal, runs, threads
from plait.server.queue.queueing import Queueing
from plait.server.queue.runs import Run
from plait.server.workers.cron_firer import CronFirer
from plait.server.workers.worker import Worker
from tests.integration.tenants.conftest import SPECS_DIR, unique
from tests.polling import until

pytestmark = pytest.mark.postgres

LEASE = 30.0
#: Long enough that no run of these tests gains a level by waiting (unless a test says).
NO_AGING = 3600.0
#: Runs of the other worker a claim can lose its place to: its claim transaction may
#: start (and stamp ``started_at``) before this one and take the claim lock after it.
ONE_BATCH = 4


async def _enqueue(
    pool: Pool,
    tenant: str,
    priorities: Sequence[int | None],
    *,
    graph_name: str = "tenant-steps",
    inputs: dict[str, Any] | None = None,
    thread_id: str | None = None,
    expires_in: float | None = None,
) -> list[Run]:
    """One run per priority, each on a thread of its own unless ``thread_id`` is given."""
    graph = await versions.get_version(pool, graph_name, "1.0.0", tenant=tenant)
    assert graph is not None
    created = []
    for priority in priorities:
        thread = thread_id or (await threads.create_thread(pool, tenant=tenant))["thread_id"]
        run, _ = await runs.create_run(
            pool,
            thread_id=thread,
            graph=graph,
            kwargs={"input": inputs or {"text": "hi"}, "stream_mode": ["values"]},
            metadata={},
            multitask_strategy="enqueue",
            tenant=tenant,
            queueing=Queueing(priority=priority, expires_in=expires_in),
        )
        created.append(run)
    return created


@asynccontextmanager
async def _workers(pool: Pool, count: int = 2, **options: Any) -> AsyncIterator[list[Worker]]:
    """``count`` workers claiming from the package's database until the block ends."""
    workers = [
        Worker(pool, specs_dir=SPECS_DIR, aging_seconds=NO_AGING, **options) for _ in range(count)
    ]
    tasks = [asyncio.create_task(worker.run()) for worker in workers]
    try:
        yield workers
    finally:
        for worker in workers:
            worker.stop()
        await asyncio.gather(*tasks)


async def _started(pool: Pool, *tenants: str) -> list[dict[str, Any]]:
    """The tenants' runs that started, in the order they started."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT run_id, tenant_id, priority FROM plait_runs "
            "WHERE tenant_id = ANY(%s) AND attempt > 0 ORDER BY started_at, queue_id",
            (list(tenants),),
        )
        return list(await cursor.fetchall())


async def _succeeded(pool: Pool, created: Sequence[Run]) -> bool:
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT count(*) AS n FROM plait_runs WHERE run_id = ANY(%s) AND status = 'success'",
            ([run.run_id for run in created],),
        )
        row = await cursor.fetchone()
    return row is not None and row["n"] == len(created)


async def _past_deadline(pool: Pool, run: Run) -> bool:
    """Whether the database's clock passed the run's ``expires_at``."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT now() > expires_at AS past FROM plait_runs WHERE run_id = %s", (run.run_id,)
        )
        row = await cursor.fetchone()
    return bool(row and row["past"])


async def _discard(pool: Pool, *tenants: str) -> None:
    async with pool.connection() as conn:
        await conn.execute("DELETE FROM plait_threads WHERE tenant_id = ANY(%s)", (list(tenants),))


async def test_high_priority_runs_start_before_low_ones_over_200_runs(tpool: Pool) -> None:
    """200 runs, priorities 9 and 0 alternating in queue order: two workers start the 100
    high ones first. Tolerance: at most one claim batch (4) of low ones among the first
    100 starts; measured: 0."""
    tenant = unique("prio")
    await store.create_tenant(tpool, tenant)
    try:
        created = await _enqueue(tpool, tenant, [9, 0] * 100)
        async with _workers(tpool, concurrency=ONE_BATCH):
            await until(lambda: _succeeded(tpool, created), "the 200 runs to succeed", 300)
        started = await _started(tpool, tenant)
        assert len(started) == 200
        low_early = [row for row in started[:100] if row["priority"] == 0]
        assert len(low_early) <= ONE_BATCH, [row["priority"] for row in started]
        # Queue order alone would have started half of them among the first 100.
        assert sum(run.priority == 0 for run in created[:100]) == 50
    finally:
        await _discard(tpool, tenant)


async def test_a_tenant_flooding_high_priority_still_gets_only_its_turns(tpool: Pool) -> None:
    """A queues 40 runs at priority 9, then B 10 at priority 0: B's runs start in their
    turns, not after A's backlog (priority orders a tenant's own runs, not its share)."""
    flood, late = unique("high"), unique("low")
    for tenant in (flood, late):
        await store.create_tenant(tpool, tenant)
    try:
        await _enqueue(tpool, flood, [9] * 40)
        late_runs = await _enqueue(tpool, late, [0] * 10)
        async with _workers(tpool, concurrency=2):
            await until(lambda: _succeeded(tpool, late_runs), "tenant B's runs to succeed", 120)
        started = [row["tenant_id"] for row in await _started(tpool, flood, late)]
        # One start each per turn: B has half of the first 20 (tolerance 2).
        assert started[:20].count(late) >= 8, started[:24]
        assert started.index(late) < 4, started[:8]
    finally:
        await _discard(tpool, flood, late)


async def test_aging_lets_a_low_priority_run_through_a_steady_stream_of_high_ones(
    tpool: Pool,
) -> None:
    """The rule: effective priority = priority + a level per aging interval waited, ties in
    queue order. A priority-0 run behind an endless stream of priority-9 runs starts once it
    has waited 9 intervals (effective 9, and it queued first). Each round the stream adds
    two high runs, the low run waits one more interval (its queue time moved back: no
    clock is waited on) and one of two claimers takes one run."""
    tenant = unique("aging")
    await store.create_tenant(tpool, tenant)
    aging = 60.0
    try:
        (low,) = await _enqueue(tpool, tenant, [0])
        claimed_in: int | None = None
        for round_ in range(12):
            await _enqueue(tpool, tenant, [9, 9])
            async with tpool.connection() as conn:
                await conn.execute(
                    "UPDATE plait_runs SET created_at = created_at - make_interval(secs => %s) "
                    "WHERE run_id = %s",
                    (aging, low.run_id),
                )
            (run,) = await runs.claim_runs(tpool, f"w{round_ % 2}", 1, LEASE, aging_seconds=aging)
            assert await runs.finish_run(tpool, run.run_id, run.lease_owner or "", "succeeded")
            if run.run_id == low.run_id:
                claimed_in = round_ + 1  # intervals waited when it was claimed
                break
            assert run.priority == 9
        assert claimed_in == 9
        async with tpool.connection() as conn:
            cursor = await conn.execute(
                "SELECT count(*) AS n FROM plait_runs WHERE tenant_id = %s AND status = 'pending'",
                (tenant,),
            )
            row = await cursor.fetchone()
        assert row is not None and row["n"] == 2 * 9 - 8  # the stream still waits behind it
    finally:
        await _discard(tpool, tenant)


async def test_an_expired_run_never_runs_and_frees_its_thread(tpool: Pool, tmp_path: Path) -> None:
    tenant = unique("expiry")
    await store.create_tenant(tpool, tenant)
    try:
        thread_id = (await threads.create_thread(tpool, tenant=tenant))["thread_id"]
        folder = str(tmp_path)
        (doomed,) = await _enqueue(
            tpool,
            tenant,
            [None],
            graph_name="tenant-side-effect",
            inputs={"folder": folder, "label": "expired"},
            thread_id=thread_id,
            expires_in=0.2,
        )
        (after,) = await _enqueue(
            tpool,
            tenant,
            [None],
            graph_name="tenant-side-effect",
            inputs={"folder": folder, "label": "next"},
            thread_id=thread_id,
        )
        # The spec's `queue` gives what the request left out.
        assert (doomed.priority, after.priority) == (2, 2)
        assert after.expires_at is not None
        assert 599 < (after.expires_at - after.created_at).total_seconds() < 601

        # No worker runs yet: the deadline passes while the run waits.
        await until(lambda: _past_deadline(tpool, doomed), "the run's deadline to pass")
        async with _workers(tpool, sweep_seconds=0.1):

            async def both_ended() -> bool:
                found = [await runs.get_run(tpool, run.run_id) for run in (doomed, after)]
                return [run.state if run else None for run in found] == ["expired", "succeeded"]

            await until(both_ended, "the expired run to end and the next one to succeed")

        ended = await runs.get_run(tpool, doomed.run_id)
        assert ended is not None
        assert (ended.status, ended.attempt) == ("error", 0)
        assert ended.error is not None and "expired" in ended.error and "never ran" in ended.error
        shown = ended.to_api()
        assert shown["plait_state"] == "expired"
        assert shown["plait_state_label"].startswith("expired: not started by ")
        events = await journal.read_after(tpool, doomed.run_id)
        assert [event.event for event in events] == ["metadata", "error", "end"]
        assert events[1].data["error"] == "RunExpired"
        # The graph's side effect happened for the next run only.
        marks = await asyncio.to_thread(lambda: sorted(path.name for path in tmp_path.iterdir()))
        assert marks == ["next"]
        thread = await threads.get_thread(tpool, thread_id, tenant)
        assert thread is not None and thread["status"] == "idle"
    finally:
        await _discard(tpool, tenant)


async def test_a_run_handed_back_after_it_started_goes_on_past_its_deadline(tpool: Pool) -> None:
    tenant = unique("handback")
    await store.create_tenant(tpool, tenant)
    try:
        (run,) = await _enqueue(tpool, tenant, [None], expires_in=0.2)
        (claimed,) = await runs.claim_runs(tpool, "w1", 1, LEASE)
        assert claimed.run_id == run.run_id
        assert await runs.release_run(tpool, run.run_id, "w1", claimed.attempt)  # SIGTERM

        await until(lambda: _past_deadline(tpool, run), "the run's deadline to pass")
        assert await runs.expire_runs(tpool) == []
        (again,) = await runs.claim_runs(tpool, "w2", 1, LEASE)
        assert (again.run_id, again.attempt, again.state) == (run.run_id, 2, "running")
    finally:
        await _discard(tpool, tenant)


async def test_a_crons_runs_get_its_priority_and_deadline(tpool: Pool) -> None:
    tenant = unique("cron")
    await store.create_tenant(tpool, tenant)
    try:
        thread_id = (await threads.create_thread(tpool, tenant=tenant))["thread_id"]
        payload = {"assistant_id": "tenant-steps", "priority": 8, "expires_in": 90.0}
        fields = crons.CronFields(
            assistant_id="tenant-steps",
            schedule="* * * * *",
            timezone="UTC",
            end_time=None,
            enabled=True,
            on_run_completed=None,
            payload=payload,
            kwargs={"input": {"text": "hi"}, "stream_mode": ["values"]},
            metadata={},
            next_run_at=datetime.now(UTC) - timedelta(seconds=1),
        )
        await crons.insert(tpool, tenant, thread_id, fields)
        await CronFirer(tpool, SPECS_DIR).fire_due()
        (fired,) = await runs.list_runs(tpool, thread_id, tenant=tenant)
        assert fired.priority == 8 and fired.expires_at is not None
        assert 89 < (fired.expires_at - fired.created_at).total_seconds() < 91
    finally:
        await _discard(tpool, tenant)
