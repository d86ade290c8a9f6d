"""A run created claimed by the creating process's own worker (``runs.DirectClaim``),
only when a claim would have taken it first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from plait.engine.store.pool import Pool
from plait.server.auth import store
from plait.server.graphs.versions import GraphVersion
from plait.server.queue.runs import DirectClaim, Run, claim_runs, create_run
from plait.server.queue.threads import create_thread
from tests.integration.server.queue.conftest import unique

pytestmark = pytest.mark.postgres

LEASE = 60.0


async def _thread(pool: Pool, tenant: str = "default") -> str:
    thread = await create_thread(pool, thread_id=unique("t"), tenant=tenant)
    return str(thread["thread_id"])


def _direct() -> DirectClaim:
    return DirectClaim(unique("w"), LEASE)


async def test_with_nothing_queued_the_run_is_created_claimed(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    direct = _direct()
    before = datetime.now(UTC)
    run, created = await create_run(
        qpool, thread_id=await _thread(qpool), graph=qgraph, kwargs={}, metadata={}, direct=direct
    )

    assert created
    assert (run.status, run.state, run.attempt) == ("running", "running", 1)
    assert run.lease_owner == direct.worker_id
    assert run.lease_expires_at is not None
    assert run.lease_expires_at >= before + timedelta(seconds=LEASE - 5)
    assert run.tenant_limits is not None  # what a claim reads for the worker's quota
    # No other worker can take it: it is held under that lease.
    assert await claim_runs(qpool, unique("other"), 10, LEASE) == []


async def test_a_run_already_queued_goes_first(qpool: Pool, qgraph: GraphVersion) -> None:
    waiting, _ = await create_run(
        qpool, thread_id=await _thread(qpool), graph=qgraph, kwargs={}, metadata={}
    )
    run, _ = await create_run(
        qpool,
        thread_id=await _thread(qpool),
        graph=qgraph,
        kwargs={},
        metadata={},
        direct=_direct(),
    )

    assert (run.status, run.lease_owner, run.attempt) == ("pending", None, 0)
    claimed = await claim_runs(qpool, unique("w"), 10, LEASE)
    assert [c.run_id for c in claimed] == [waiting.run_id, run.run_id]


async def test_a_busy_thread_or_a_delayed_run_is_queued(qpool: Pool, qgraph: GraphVersion) -> None:
    thread = await _thread(qpool)
    first, _ = await create_run(
        qpool, thread_id=thread, graph=qgraph, kwargs={}, metadata={}, direct=_direct()
    )
    behind, _ = await create_run(
        qpool,
        thread_id=thread,
        graph=qgraph,
        kwargs={},
        metadata={},
        multitask_strategy="enqueue",
        direct=_direct(),
    )
    later, _ = await create_run(
        qpool,
        thread_id=await _thread(qpool),
        graph=qgraph,
        kwargs={},
        metadata={},
        after_seconds=30,
        direct=_direct(),
    )

    assert first.status == "running"
    assert behind.status == "pending"
    assert later.status == "pending"


async def test_a_capped_tenant_runs_are_queued(qpool: Pool, qgraph: GraphVersion) -> None:
    tenant = unique("capped")
    await store.create_tenant(qpool, tenant, limits={"max_running_runs": 5})
    try:
        run, _ = await create_run(
            qpool,
            thread_id=await _thread(qpool, tenant),
            graph=qgraph,
            kwargs={},
            metadata={},
            tenant=tenant,
            direct=_direct(),
        )
        assert run.status == "pending"
    finally:
        async with qpool.connection() as conn:
            await conn.execute("DELETE FROM plait_threads WHERE tenant_id = %s", (tenant,))
            await conn.execute("DELETE FROM plait_tenants WHERE tenant_id = %s", (tenant,))


async def test_a_repeated_request_gets_the_first_run_not_a_new_claim(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    thread = await _thread(qpool)
    key = unique("key")

    async def request(direct: DirectClaim) -> tuple[Run, bool]:
        return await create_run(
            qpool,
            thread_id=thread,
            graph=qgraph,
            kwargs={"input": {"text": "hi"}},
            metadata={},
            idempotency_key=key,
            route="POST /threads/x/runs",
            direct=direct,
        )

    first, created = await request(_direct())
    again, created_again = await request(_direct())

    assert created and first.status == "running"
    assert not created_again
    assert again.run_id == first.run_id
    assert again.lease_owner == first.lease_owner
