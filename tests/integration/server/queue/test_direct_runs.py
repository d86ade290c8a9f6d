"""Thread and run records of runs driven in-process (``plait run``), on real PostgreSQL."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from plait.engine.run import ForbiddenTransition
from plait.engine.run.records import ThreadSpecMismatch
from plait.engine.store.pool import Pool
from plait.server.queue.direct_runs import (
    claim_thread,
    finish_run,
    get_run,
    get_thread,
    list_runs,
    start_run,
)
from plait.server.queue.journal import JournalListener

pytestmark = pytest.mark.postgres

#: Generous bound on waiting for a notification; nothing waits for time to pass.
WAIT_SECONDS = 20.0


def _id() -> str:
    return uuid.uuid4().hex


async def test_first_claim_records_the_graph(pool: Pool) -> None:
    thread_id = _id()
    assert await get_thread(pool, thread_id) is None

    record = await claim_thread(
        pool, thread_id, graph="team", version="1.0.0", digest="d1", git_sha="abc123"
    )

    assert (record.graph, record.version, record.digest, record.git_sha) == (
        "team",
        "1.0.0",
        "d1",
        "abc123",
    )
    assert await get_thread(pool, thread_id) == record


async def test_second_claim_with_same_digest_returns_first_record(pool: Pool) -> None:
    thread_id = _id()
    first = await claim_thread(pool, thread_id, graph="team", version="1.0.0", digest="d1")
    again = await claim_thread(pool, thread_id, graph="team", version="1.0.0", digest="d1")
    assert again.created_at == first.created_at


@pytest.mark.parametrize(
    ("graph", "version", "digest"),
    [("team", "1.0.0", "other"), ("team", "1.1.0", "d1"), ("other", "1.0.0", "d1")],
)
async def test_claim_with_another_spec_is_refused(
    pool: Pool, graph: str, version: str, digest: str
) -> None:
    thread_id = _id()
    await claim_thread(pool, thread_id, graph="team", version="1.0.0", digest="d1")

    with pytest.raises(ThreadSpecMismatch, match=r"team@1\.0\.0") as caught:
        await claim_thread(pool, thread_id, graph=graph, version=version, digest=digest)

    assert caught.value.existing.digest == "d1"


async def test_concurrent_claims_agree_on_one_record(pool: Pool) -> None:
    thread_id = _id()
    records = await asyncio.gather(
        *(
            claim_thread(pool, thread_id, graph="team", version="1.0.0", digest="d1")
            for _ in range(5)
        )
    )
    assert len({record.created_at for record in records}) == 1


async def test_run_start_and_finish(pool: Pool) -> None:
    thread = await claim_thread(pool, _id(), graph="team", version="1.0.0", digest="d1")

    started = await start_run(pool, "run-1-" + thread.thread_id, thread)
    assert started.status == "running"
    assert started.ended_at is None
    assert (started.graph, started.version, started.digest) == ("team", "1.0.0", "d1")

    finished = await finish_run(pool, started.run_id, "failed", "node 'fetch' timed out")
    assert finished.status == "error"
    assert finished.error == "node 'fetch' timed out"
    assert finished.ended_at is not None
    assert finished.ended_at >= finished.started_at
    assert await get_run(pool, started.run_id) == finished

    second = await start_run(pool, "run-2-" + thread.thread_id, thread)
    await finish_run(pool, second.run_id, "succeeded")
    runs = await list_runs(pool, thread.thread_id)
    assert [(run.run_id, run.status) for run in runs] == [
        (started.run_id, "error"),
        (second.run_id, "success"),
    ]
    updated = await get_thread(pool, thread.thread_id)
    assert updated is not None
    assert updated.updated_at > thread.updated_at


async def test_a_started_run_announces_its_thread(pool: Pool) -> None:
    """A stream following the thread wakes for a run ``plait run`` records, as for the
    server's own (polling is off here: only the announcement can wake it)."""
    thread = await claim_thread(pool, _id(), graph="team", version="1.0.0", digest="d1")
    listener = JournalListener(pool, poll_seconds=3600.0)
    async with asyncio.timeout(WAIT_SECONDS):
        await listener.start()
    try:
        with listener.new_runs(thread.thread_id) as new_runs:
            await start_run(pool, "run-1-" + thread.thread_id, thread)
            async with asyncio.timeout(WAIT_SECONDS):
                await new_runs.wait()
    finally:
        await listener.stop()


async def test_finishing_an_unknown_run_fails(pool: Pool) -> None:
    with pytest.raises(LookupError, match="no run"):
        await finish_run(pool, _id(), "succeeded")


async def test_a_parked_cli_run_waits_until_the_next_run_and_never_ends_twice(pool: Pool) -> None:
    thread = await claim_thread(pool, _id(), graph="team", version="1.0.0", digest="d1")
    parked = await start_run(pool, "run-1-" + thread.thread_id, thread)
    waiting = await finish_run(pool, parked.run_id, "waiting_for_person")
    # Stopped on an approval: `success` as the Agent Server records it, waiting in Plait.
    assert (waiting.status, waiting.state) == ("success", "waiting_for_person")
    with pytest.raises(ForbiddenTransition, match="'waiting_for_person' to 'failed'"):
        await finish_run(pool, parked.run_id, "failed", "late")

    await start_run(pool, "run-2-" + thread.thread_id, thread)  # the decision's run
    settled = await get_run(pool, parked.run_id)
    assert settled is not None and (settled.status, settled.state) == ("success", "succeeded")
