"""A worker journals a run's events only while it holds the run's lease (real Postgres).

Found by the chaos test: a worker whose lease expired kept writing events after
another worker had taken the run over and ended it (an event after ``end``).
"""

from __future__ import annotations

import pytest

from plait.engine.store.pool import Pool
from plait.server.graphs.versions import GraphVersion
from plait.server.queue import journal
from plait.server.queue.journal_writer import JournalCommitter, JournalWriter
from plait.server.queue.runs import Run, claim_runs, create_run, finish_run
from plait.server.queue.threads import create_thread
from tests.integration.server.queue.conftest import unique

pytestmark = pytest.mark.postgres

LEASE = 30.0
#: A lease that is already over: stands for a worker that stalled or died.
EXPIRED = -1.0


async def _claimed_by_second_worker(pool: Pool, graph: GraphVersion) -> Run:
    """A run claimed by ``stalled`` (lease over at once), then taken over by ``alive``."""
    thread = await create_thread(pool, thread_id=unique("t"))
    run, _ = await create_run(
        pool, thread_id=thread["thread_id"], graph=graph, kwargs={"input": {}}, metadata={}
    )
    [first] = await claim_runs(pool, "stalled", 10, EXPIRED)
    [again] = await claim_runs(pool, "alive", 10, LEASE)
    assert first.run_id == again.run_id == run.run_id
    return again


async def _events(pool: Pool, run_id: str) -> list[tuple[int, str]]:
    return [(e.seq, e.event) for e in await journal.read_after(pool, run_id)]


async def test_a_worker_that_lost_the_lease_cannot_append(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    run = await _claimed_by_second_worker(qpool, qgraph)

    refused = await journal.append_runs(qpool, {run.run_id: [("values", {})]}, owner="stalled")
    written = await journal.append_runs(qpool, {run.run_id: [("values", {})]}, owner="alive")

    assert refused == {}
    assert written == {run.run_id: 2}
    assert await _events(qpool, run.run_id) == [(1, "metadata"), (2, "values")]


async def test_no_event_after_the_end(qpool: Pool, qgraph: GraphVersion) -> None:
    run = await _claimed_by_second_worker(qpool, qgraph)
    assert await finish_run(qpool, run.run_id, "alive", "succeeded")

    late = await journal.append_runs(qpool, {run.run_id: [("values", {})]}, owner="alive")

    assert late == {}
    assert await _events(qpool, run.run_id) == [(1, "metadata"), (2, "end")]


async def test_the_stale_workers_writer_fails_and_the_others_go_on(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    """Through the worker's committer: the stale run's writer raises, other runs are written."""
    lost = await _claimed_by_second_worker(qpool, qgraph)
    thread = await create_thread(qpool, thread_id=unique("t"))
    kept, _ = await create_run(
        qpool, thread_id=thread["thread_id"], graph=qgraph, kwargs={"input": {}}, metadata={}
    )
    [claimed] = await claim_runs(qpool, "stalled", 10, LEASE)
    assert claimed.run_id == kept.run_id

    async with JournalCommitter(qpool, owner="stalled") as committer:
        stale, fine = JournalWriter(lost.run_id, committer), JournalWriter(kept.run_id, committer)
        stale.emit("values", {"n": 1})
        fine.emit("values", {"n": 1})
        with pytest.raises(journal.RunGone):
            await stale.close()
        await fine.close()

    assert await _events(qpool, lost.run_id) == [(1, "metadata")]
    assert await _events(qpool, kept.run_id) == [(1, "metadata"), (2, "values")]


async def test_appends_without_an_owner_are_unchanged(qpool: Pool, qgraph: GraphVersion) -> None:
    run = await _claimed_by_second_worker(qpool, qgraph)
    assert await journal.append_runs(qpool, {run.run_id: [("custom", 1)]}) == {run.run_id: 2}
