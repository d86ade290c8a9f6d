"""A claim reads a few pending runs, not the whole queue: with a thousand runs waiting,
starting one must not cost a thousand rows (it did, once per run started, which made a
server with a long queue slower the longer it got)."""

from __future__ import annotations

from plait.engine.store.pool import Pool
from plait.server.graphs.versions import save_version
from plait.server.queue.queueing import Queueing
from plait.server.queue.runs import claim_runs, finish_run
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


async def test_a_claim_reads_a_few_runs_when_the_statistics_saw_no_queue(lone_pool: Pool) -> None:
    # PostgreSQL's statistics are whatever the last ANALYZE saw: autovacuum analyzes a
    # busy table at moments of its own, often when the queue is empty. Planned with those,
    # a claim read every pending run of each priority through another index of pending
    # runs and sorted them (seen in bench/statements.py: 3.8 ms a claim with 990 queued).
    graph = await save_version(lone_pool, spec_text(unique("g")), file="<test>")
    for _ in range(200):
        run = await run_on_new_thread(lone_pool, graph)
        [claimed] = await claim_runs(lone_pool, "w0", 1, 60)
        assert claimed.run_id == run.run_id
        assert await finish_run(lone_pool, run.run_id, "w0", "succeeded")
    async with lone_pool.connection() as conn:
        await conn.set_autocommit(True)
        await conn.execute("VACUUM ANALYZE plait_runs")
    queued = [await run_on_new_thread(lone_pool, graph) for _ in range(QUEUED)]
    before = await _rows_read(lone_pool)

    claimed = await claim_runs(lone_pool, "w1", 1, 60)

    read = await _rows_read(lone_pool) - before
    assert [run.run_id for run in claimed] == [queued[0].run_id]
    assert read < 100, f"one claim read {read} rows of plait_runs with {QUEUED} queued"
