"""Runs per tenant: the claim query's per-tenant cap and its fairness between tenants."""

from __future__ import annotations

import asyncio

import pytest

from plait.engine.store.pool import Pool
from plait.server.auth import store
from plait.server.graphs import versions
from plait.server.queue import runs, threads
from plait.server.queue.runs import Run
from plait.server.workers.worker import Worker
from tests.integration.tenants.conftest import unique
from tests.polling import until

pytestmark = pytest.mark.postgres

LEASE = 30.0


async def _enqueue(pool: Pool, tenant: str, count: int) -> list[Run]:
    """``count`` runs of ``tenant``, each on a thread of its own (so all are claimable)."""
    graph = await versions.get_version(pool, "tenant-steps", "1.0.0", tenant=tenant)
    assert graph is not None
    created = []
    for _ in range(count):
        thread = await threads.create_thread(pool, tenant=tenant)
        run, _ = await runs.create_run(
            pool,
            thread_id=thread["thread_id"],
            graph=graph,
            kwargs={"input": {"text": "hi"}, "stream_mode": ["values"]},
            metadata={},
            tenant=tenant,
        )
        created.append(run)
    return created


async def _discard(pool: Pool, *tenants: str) -> None:
    async with pool.connection() as conn:
        await conn.execute("DELETE FROM plait_threads WHERE tenant_id = ANY(%s)", (list(tenants),))


async def test_a_tenant_never_runs_more_than_its_cap(tpool: Pool) -> None:
    capped, free = unique("capped"), unique("free")
    await store.create_tenant(tpool, capped, limits={"max_running_runs": 2})
    await store.create_tenant(tpool, free)
    try:
        capped_runs = await _enqueue(tpool, capped, 5)
        free_runs = await _enqueue(tpool, free, 3)

        claimed = await runs.claim_runs(tpool, "w1", 100, LEASE)
        by_tenant = sorted(run.tenant for run in claimed)
        assert by_tenant == sorted([capped, capped, free, free, free])
        # The cap holds across claims (another worker) while the two run.
        assert await runs.claim_runs(tpool, "w2", 100, LEASE) == []

        # One of them ends: exactly one more of the tenant's runs may start.
        first = next(run for run in claimed if run.tenant == capped)
        assert await runs.finish_run(tpool, first.run_id, "w1", "succeeded")
        again = await runs.claim_runs(tpool, "w2", 100, LEASE)
        assert [run.tenant for run in again] == [capped]
        assert {run.run_id for run in again} < {run.run_id for run in capped_runs}
        assert {run.run_id for run in claimed if run.tenant == free} == {
            run.run_id for run in free_runs
        }
    finally:
        await _discard(tpool, capped, free)


async def test_a_cap_raised_later_lets_more_runs_start(tpool: Pool) -> None:
    tenant = unique("raise")
    await store.create_tenant(tpool, tenant, limits={"max_running_runs": 1})
    try:
        await _enqueue(tpool, tenant, 3)
        assert len(await runs.claim_runs(tpool, "w1", 10, LEASE)) == 1
        await store.update_tenant(tpool, tenant, {"max_running_runs": None})
        assert len(await runs.claim_runs(tpool, "w1", 10, LEASE)) == 2
    finally:
        await _discard(tpool, tenant)


async def test_a_claimed_run_brings_its_tenants_daily_limits_as_they_are_now(
    tpool: Pool,
) -> None:
    tenant = unique("budget")
    await store.create_tenant(tpool, tenant, limits={"daily_max_steps": 5})
    try:
        await _enqueue(tpool, tenant, 1)
        # Changed while the run waited: the worker meters it with the new limit.
        await store.update_tenant(tpool, tenant, {"daily_max_steps": 7, "daily_max_cost": 1.5})
        (claimed,) = await runs.claim_runs(tpool, "w1", 10, LEASE)
        assert claimed.tenant_limits == {
            "daily_max_steps": 7,
            "daily_max_tokens": None,
            "daily_max_cost": 1.5,
        }
    finally:
        await _discard(tpool, tenant)


async def test_claims_take_turns_between_tenants(tpool: Pool) -> None:
    flood, late = unique("flood"), unique("late")
    for tenant in (flood, late):
        await store.create_tenant(tpool, tenant)
    try:
        await _enqueue(tpool, flood, 10)
        late_runs = await _enqueue(tpool, late, 2)
        # Two slots: each tenant's oldest run, though the flood queued first.
        first = await runs.claim_runs(tpool, "w1", 2, LEASE)
        assert sorted(run.tenant for run in first) == sorted([flood, late])
        second = await runs.claim_runs(tpool, "w1", 2, LEASE)
        assert sorted(run.tenant for run in second) == sorted([flood, late])
        assert {run.run_id for run in first + second if run.tenant == late} == {
            run.run_id for run in late_runs
        }
    finally:
        await _discard(tpool, flood, late)


async def test_a_flooding_tenant_does_not_starve_another(tpool: Pool) -> None:
    """Tenant A queues 50 runs, then B queues 2; a real worker starts B's before A's backlog
    drains (start timestamps)."""
    flood, late = unique("a"), unique("b")
    for tenant in (flood, late):
        await store.create_tenant(tpool, tenant)
    try:
        await _flood_then_late(tpool, flood, late)
    finally:
        # Even after a failure: the other tests claim any tenant's runs.
        await _discard(tpool, flood, late)


async def _flood_then_late(tpool: Pool, flood: str, late: str) -> None:
    flood_runs = await _enqueue(tpool, flood, 50)
    late_runs = await _enqueue(tpool, late, 2)
    assert max(r.queue_id for r in flood_runs) < min(r.queue_id for r in late_runs)
    worker = Worker(tpool, concurrency=2, specs_dir=None)
    task = asyncio.create_task(worker.run())
    try:

        async def late_done() -> bool:
            found = [await runs.get_run(tpool, run.run_id) for run in late_runs]
            return all(run is not None and run.status == "success" for run in found)

        await until(late_done, "tenant B's runs to succeed")
    finally:
        worker.stop()
        await task
    async with tpool.connection() as conn:
        cursor = await conn.execute(
            """
            SELECT tenant_id, started_at FROM plait_runs
            WHERE tenant_id = ANY(%s) AND attempt > 0 ORDER BY started_at, queue_id
            """,
            ([flood, late],),
        )
        started = [row["tenant_id"] for row in await cursor.fetchall()]
        cursor = await conn.execute(
            "SELECT count(*) AS n FROM plait_runs WHERE tenant_id = %s AND attempt = 0",
            (flood,),
        )
        never_started = (await cursor.fetchone() or {"n": 0})["n"]
    # B's two runs were among the first four started (one per tenant per turn) ...
    assert late in started[:2] and started[:4].count(late) == 2, started[:6]
    # ... while most of A's backlog had not even started.
    assert never_started >= 40
