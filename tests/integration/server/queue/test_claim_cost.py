"""A claim reads a few pending runs, not the whole queue: with a thousand runs waiting,
starting one must not cost a thousand rows (it did, once per run started, which made a
server with a long queue slower the longer it got)."""

from __future__ import annotations

from plait.engine.store.pool import Pool
from plait.server.graphs.versions import save_version
from plait.server.queue.queueing import Queueing
from plait.server.queue.runs import claim_runs
from tests.integration.server.queue.conftest import run_on_new_thread, spec_text, unique

QUEUED = 1000


async def _rows_read(pool: Pool) -> int:
    """Rows of plait_runs read so far by scans of the table and its indexes."""
    async with pool.connection() as conn:
        # The backend's counts reach the statistics once it is idle outside a transaction.
        await conn.execute("SELECT pg_stat_force_next_flush()")
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n "
            "FROM pg_stat_user_tables WHERE relname = 'plait_runs'"
        )
        row = await cursor.fetchone()
    assert row is not None
    return int(row["n"])


async def test_a_claim_reads_a_few_runs_of_a_thousand_queued(lone_pool: Pool) -> None:
    graph = await save_version(lone_pool, spec_text(unique("g")), file="<test>")
    queued = [
        # Every priority, as a busy queue has.
        await run_on_new_thread(lone_pool, graph, queueing=Queueing(priority=index % 10))
        for index in range(QUEUED)
    ]
    before = await _rows_read(lone_pool)

    claimed = await claim_runs(lone_pool, "w1", 1, 60)

    read = await _rows_read(lone_pool) - before
    # The oldest of the highest priority, as a claim over the whole queue takes.
    assert [run.run_id for run in claimed] == [queued[9].run_id]
    # The runs it ranks (a few per priority) and their threads' checks: tens, not 1,000.
    assert read < 100, f"one claim read {read} rows of plait_runs with {QUEUED} queued"
