"""Run creation (multitask strategies, idempotency) and claims, on real Postgres."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from plait.engine.run import ForbiddenTransition
from plait.engine.run.records import ThreadSpecMismatch
from plait.engine.store.pool import Pool
from plait.server.graphs.versions import GraphVersion, save_version
from plait.server.queue import journal
from plait.server.queue.direct_runs import claim_thread
from plait.server.queue.direct_runs import get_thread as cli_get_thread
from plait.server.queue.journal import JournalEvent
from plait.server.queue.runs import (
    RUNS_CHANNEL,
    IdempotencyMismatch,
    Run,
    RunActive,
    RunNotFound,
    ThreadBusy,
    cancel_run,
    claim_runs,
    create_run,
    delete_run,
    finish_run,
    get_run,
    heartbeat,
    list_runs,
    release_run,
)
from plait.server.queue.threads import ThreadNotFound, create_thread, get_thread
from tests.integration.server.queue.conftest import spec_text, unique

pytestmark = pytest.mark.postgres

LEASE = 30.0
#: A lease that is already over: stands for a worker that died.
EXPIRED = -1.0
#: Generous bound on waiting for a notification; nothing waits for time to pass.
WAIT_SECONDS = 20.0


async def _new_thread(pool: Pool) -> str:
    return (await create_thread(pool, thread_id=unique("t")))["thread_id"]


async def _create(
    pool: Pool, graph: GraphVersion, thread_id: str, strategy: str = "reject", **extra: Any
) -> Run:
    run, created = await create_run(
        pool,
        thread_id=thread_id,
        graph=graph,
        kwargs={"input": {"text": "hi"}, "stream_mode": ["values"]},
        metadata={},
        multitask_strategy=strategy,
        **extra,
    )
    assert created
    return run


async def _status(pool: Pool, thread_id: str) -> str:
    thread = await get_thread(pool, thread_id)
    assert thread is not None
    return str(thread["status"])


# --------------------------------------------------------------------------- creating


async def test_create_accepts_a_pending_run_and_records_the_graph(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    thread_id = await _new_thread(qpool)
    assert await cli_get_thread(qpool, thread_id) is None  # no graph yet: new for the CLI

    run = await _create(qpool, qgraph, thread_id)

    assert (run.status, run.attempt, run.graph, run.version) == ("pending", 0, qgraph.name, "1.0.0")
    assert run.kwargs["input"] == {"text": "hi"}
    assert await get_run(qpool, run.run_id, thread_id) == run
    assert await get_run(qpool, run.run_id, unique("other")) is None
    assert await _status(qpool, thread_id) == "busy"
    thread = await get_thread(qpool, thread_id)
    assert thread is not None
    assert thread["metadata"] == {"graph_id": qgraph.name, "assistant_id": qgraph.assistant_id}
    record = await cli_get_thread(qpool, thread_id)
    assert record is not None and record.digest == qgraph.digest
    api = run.to_api()
    assert api["run_id"] == run.run_id and api["status"] == "pending"
    assert (api["plait_graph"], api["plait_version"]) == (qgraph.name, "1.0.0")
    assert set(api) >= {"thread_id", "assistant_id", "created_at", "updated_at", "metadata"}


async def test_a_created_run_starts_its_journal_before_any_claim(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    thread_id = await _new_thread(qpool)

    run = await _create(qpool, qgraph, thread_id)

    # Pending, never claimed: a stream opened now already gets its first event.
    assert run.status == "pending" and run.lease_owner is None
    assert await journal.read_after(qpool, run.run_id) == [
        JournalEvent(run.run_id, 1, "metadata", {"run_id": run.run_id, "attempt": 1})
    ]
    # A refused run journals nothing: the event commits with the run or not at all.
    with pytest.raises(ThreadBusy):
        await _create(qpool, qgraph, thread_id)
    async with qpool.connection() as conn:
        cursor = await conn.execute(
            "SELECT count(*) AS n FROM plait_run_events e JOIN plait_runs r USING (run_id) "
            "WHERE r.thread_id = %s",
            (thread_id,),
        )
        counted = await cursor.fetchone()
    assert counted is not None and counted["n"] == 1


async def test_runs_created_at_once_on_a_free_thread_start_one(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    """Runs created at once on one free thread are decided under its lock, one at a time:
    of eight, one is created and seven are refused naming it."""
    thread_id = await _new_thread(qpool)

    results = await asyncio.gather(
        *(_create(qpool, qgraph, thread_id) for _ in range(8)), return_exceptions=True
    )

    created = [result for result in results if isinstance(result, Run)]
    refused = [result for result in results if isinstance(result, ThreadBusy)]
    assert (len(created), len(refused)) == (1, 7), results
    assert all(created[0].run_id in str(busy) for busy in refused)
    assert [run.run_id for run in await list_runs(qpool, thread_id)] == [created[0].run_id]


async def test_unknown_thread_is_refused_unless_created(qpool: Pool, qgraph: GraphVersion) -> None:
    thread_id = unique("t")
    with pytest.raises(ThreadNotFound):
        await _create(qpool, qgraph, thread_id)

    run = await _create(qpool, qgraph, thread_id, if_not_exists="create")

    assert run.thread_id == thread_id
    assert await _status(qpool, thread_id) == "busy"


async def test_a_thread_runs_only_the_digest_it_started_with(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    thread_id = await _new_thread(qpool)
    await _create(qpool, qgraph, thread_id, "enqueue")
    other = await save_version(qpool, spec_text(unique("g")))

    with pytest.raises(ThreadSpecMismatch):
        await _create(qpool, other, thread_id, "enqueue")
    # The CLI sees the same thread as started on the server's graph.
    with pytest.raises(ThreadSpecMismatch):
        await claim_thread(qpool, thread_id, graph=other.name, version="1.0.0", digest="x")


async def test_a_run_refused_for_its_spec_leaves_the_parked_run_waiting(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    # A refused run changes nothing on its thread: its parked run is settled only by a
    # run the thread takes.
    thread_id = await _new_thread(qpool)
    parked = await _create(qpool, qgraph, thread_id)
    await claim_runs(qpool, "w1", 10, LEASE)
    assert await finish_run(qpool, parked.run_id, "w1", "waiting_for_person")
    other = await save_version(qpool, spec_text(unique("g")))

    for _ in range(3):
        with pytest.raises(ThreadSpecMismatch):
            await _create(qpool, other, thread_id)
    again = await get_run(qpool, parked.run_id)
    assert again is not None and again.state == "waiting_for_person"
    assert await _status(qpool, thread_id) == "interrupted"
    assert [run.run_id for run in await list_runs(qpool, thread_id)] == [parked.run_id]

    answer = await _create(qpool, qgraph, thread_id)
    settled = await get_run(qpool, parked.run_id)
    assert settled is not None and settled.state == "succeeded"
    assert await _status(qpool, thread_id) == "busy"
    assert [e.event for e in await journal.read_after(qpool, answer.run_id)] == ["metadata"]


async def test_reject_refuses_a_second_run(qpool: Pool, qgraph: GraphVersion) -> None:
    thread_id = await _new_thread(qpool)
    first = await _create(qpool, qgraph, thread_id)

    with pytest.raises(ThreadBusy, match=first.run_id):
        await _create(qpool, qgraph, thread_id)

    assert [run.run_id for run in await list_runs(qpool, thread_id)] == [first.run_id]


async def test_enqueue_runs_after_the_active_run(qpool: Pool, qgraph: GraphVersion) -> None:
    thread_id = await _new_thread(qpool)
    first = await _create(qpool, qgraph, thread_id)
    second = await _create(qpool, qgraph, thread_id, "enqueue")

    assert [run.run_id for run in await claim_runs(qpool, "w1", 10, LEASE)] == [first.run_id]
    assert await claim_runs(qpool, "w2", 10, LEASE) == []
    assert await finish_run(qpool, first.run_id, "w1", "succeeded")
    assert await _status(qpool, thread_id) == "busy"

    assert [run.run_id for run in await claim_runs(qpool, "w2", 10, LEASE)] == [second.run_id]
    assert await finish_run(qpool, second.run_id, "w2", "succeeded")
    assert await _status(qpool, thread_id) == "idle"
    listed = await list_runs(qpool, thread_id)
    assert [(r.run_id, r.status) for r in listed] == [
        (second.run_id, "success"),
        (first.run_id, "success"),
    ]


@pytest.mark.parametrize("strategy", ["interrupt", "rollback"])
async def test_interrupt_and_rollback_ask_the_running_run_to_stop(
    qpool: Pool, qgraph: GraphVersion, strategy: str
) -> None:
    thread_id = await _new_thread(qpool)
    first = await _create(qpool, qgraph, thread_id)
    [claimed] = await claim_runs(qpool, "w1", 10, LEASE)

    second = await _create(qpool, qgraph, thread_id, strategy)

    stopping = await get_run(qpool, first.run_id)
    assert stopping is not None
    assert (stopping.status, stopping.cancel_action) == ("running", strategy)
    assert await heartbeat(qpool, "w1", {claimed.run_id: 1}, LEASE) == {first.run_id}
    assert await claim_runs(qpool, "w2", 10, LEASE) == []  # waits for the first to stop
    assert await finish_run(qpool, first.run_id, "w1", "cancelled")
    assert [run.run_id for run in await claim_runs(qpool, "w2", 10, LEASE)] == [second.run_id]


@pytest.mark.parametrize("how", ["interrupt", "rollback", "cancel_run"])
async def test_stopping_a_running_run_wakes_its_worker(
    qpool: Pool, qgraph: GraphVersion, queue_database_url: str, how: str
) -> None:
    thread_id = await _new_thread(qpool)
    first = await _create(qpool, qgraph, thread_id)
    await claim_runs(qpool, "w1", 10, LEASE)
    async with await psycopg.AsyncConnection.connect(queue_database_url, autocommit=True) as conn:
        await conn.execute(f"LISTEN {RUNS_CHANNEL}")

        if how == "cancel_run":
            await cancel_run(qpool, thread_id, first.run_id)
        else:
            await _create(qpool, qgraph, thread_id, how)

        # A worker hears its own run's id and looks at once, not at its next heartbeat.
        async with asyncio.timeout(WAIT_SECONDS):
            async for note in conn.notifies():
                if note.payload == first.run_id:
                    break


async def test_interrupt_stops_pending_runs_at_once(qpool: Pool, qgraph: GraphVersion) -> None:
    thread_id = await _new_thread(qpool)
    first = await _create(qpool, qgraph, thread_id)

    second = await _create(qpool, qgraph, thread_id, "interrupt")

    stopped = await get_run(qpool, first.run_id)
    assert stopped is not None and stopped.status == "interrupted"
    events = await journal.read_after(qpool, first.run_id)
    assert [(e.seq, e.event) for e in events] == [(1, "metadata"), (2, "end")]
    assert [run.run_id for run in await claim_runs(qpool, "w1", 10, LEASE)] == [second.run_id]


async def test_rollback_deletes_pending_runs(qpool: Pool, qgraph: GraphVersion) -> None:
    thread_id = await _new_thread(qpool)
    first = await _create(qpool, qgraph, thread_id)

    second = await _create(qpool, qgraph, thread_id, "rollback")

    assert await get_run(qpool, first.run_id) is None
    assert [run.run_id for run in await list_runs(qpool, thread_id)] == [second.run_id]


async def test_unknown_strategy_is_refused(qpool: Pool, qgraph: GraphVersion) -> None:
    with pytest.raises(ValueError, match="multitask_strategy"):
        await _create(qpool, qgraph, await _new_thread(qpool), "sometimes")


# --------------------------------------------------------------------------- idempotency


async def test_same_key_and_body_give_the_same_run(qpool: Pool, qgraph: GraphVersion) -> None:
    thread_id = await _new_thread(qpool)
    body: dict[str, Any] = {"input": {"text": "once"}}

    async def post(route: str = "/runs") -> tuple[Run, bool]:
        return await create_run(
            qpool,
            thread_id=thread_id,
            graph=qgraph,
            kwargs=body,
            metadata={},
            multitask_strategy="enqueue",
            idempotency_key="key-1",
            route=route,
        )

    first, created = await post()
    again, created_again = await post()

    assert (created, created_again) == (True, False)
    assert again == first
    elsewhere, created_elsewhere = await post("/runs/wait")
    assert created_elsewhere and elsewhere.run_id != first.run_id
    body["input"] = {"text": "twice"}
    with pytest.raises(IdempotencyMismatch, match=first.run_id):
        await post()


async def test_concurrent_duplicates_create_one_run(qpool: Pool, qgraph: GraphVersion) -> None:
    thread_id = await _new_thread(qpool)
    key = unique("key")

    results = await asyncio.gather(
        *(
            create_run(
                qpool,
                thread_id=thread_id,
                graph=qgraph,
                kwargs={"input": {"text": "hi"}},
                metadata={"n": 1},
                # reject: a second run would be refused, so only idempotency can pass them all
                multitask_strategy="reject",
                idempotency_key=key,
                route="/threads/{thread_id}/runs",
            )
            for _ in range(10)
        )
    )

    assert len({run.run_id for run, _ in results}) == 1
    assert sorted(created for _, created in results) == [False] * 9 + [True]
    assert len(await list_runs(qpool, thread_id)) == 1


async def test_a_refused_request_does_not_keep_its_key(qpool: Pool, qgraph: GraphVersion) -> None:
    thread_id = await _new_thread(qpool)
    first = await _create(qpool, qgraph, thread_id)
    with pytest.raises(ThreadBusy):
        await _create(qpool, qgraph, thread_id, idempotency_key="k", route="r")
    [claimed] = await claim_runs(qpool, "w1", 10, LEASE)
    assert claimed.run_id == first.run_id
    await finish_run(qpool, first.run_id, "w1", "succeeded")

    retried = await _create(qpool, qgraph, thread_id, idempotency_key="k", route="r")

    assert retried.run_id != first.run_id


# --------------------------------------------------------------------------- claims


async def test_claims_take_one_run_per_thread_in_order(qpool: Pool, qgraph: GraphVersion) -> None:
    a, b = await _new_thread(qpool), await _new_thread(qpool)
    a1 = await _create(qpool, qgraph, a)
    a2 = await _create(qpool, qgraph, a, "enqueue")
    b1 = await _create(qpool, qgraph, b)

    claimed = await claim_runs(qpool, "w1", 10, LEASE)

    assert [run.run_id for run in claimed] == [a1.run_id, b1.run_id]
    assert all(r.status == "running" and r.attempt == 1 for r in claimed)
    assert all(r.lease_owner == "w1" and r.lease_expires_at is not None for r in claimed)
    assert await claim_runs(qpool, "w2", 10, LEASE) == []
    await finish_run(qpool, a1.run_id, "w1", "succeeded")
    assert [run.run_id for run in await claim_runs(qpool, "w2", 10, LEASE)] == [a2.run_id]


async def test_claim_respects_the_limit(qpool: Pool, qgraph: GraphVersion) -> None:
    runs = [await _create(qpool, qgraph, await _new_thread(qpool)) for _ in range(3)]
    assert await claim_runs(qpool, "w1", 0, LEASE) == []
    first = await claim_runs(qpool, "w1", 2, LEASE)
    rest = await claim_runs(qpool, "w1", 2, LEASE)
    assert [r.run_id for r in first + rest] == [r.run_id for r in runs]


async def test_concurrent_claimers_never_share_a_run(qpool: Pool, qgraph: GraphVersion) -> None:
    created = [await _create(qpool, qgraph, await _new_thread(qpool)) for _ in range(20)]

    batches = await asyncio.gather(*(claim_runs(qpool, f"w{i}", 6, LEASE) for i in range(5)))

    claimed = [run.run_id for batch in batches for run in batch]
    assert sorted(claimed) == sorted(run.run_id for run in created)
    for index, batch in enumerate(batches):
        assert all(run.lease_owner == f"w{index}" for run in batch)


async def test_an_expired_lease_is_claimed_again(qpool: Pool, qgraph: GraphVersion) -> None:
    thread_id = await _new_thread(qpool)
    run = await _create(qpool, qgraph, thread_id)
    later = await _create(qpool, qgraph, thread_id, "enqueue")
    [dead] = await claim_runs(qpool, "dead", 10, EXPIRED)

    [again] = await claim_runs(qpool, "alive", 10, LEASE)

    assert (again.run_id, again.attempt, again.lease_owner) == (run.run_id, 2, "alive")
    assert dead.attempt == 1
    # The first worker lost it: it must stop, and it cannot overwrite the outcome.
    assert await heartbeat(qpool, "dead", {run.run_id: dead.attempt}, LEASE) == {run.run_id}
    assert not await finish_run(qpool, run.run_id, "dead", "failed", "lost")
    assert not await release_run(qpool, run.run_id, "dead")
    current = await get_run(qpool, run.run_id)
    assert current is not None and (current.status, current.lease_owner) == ("running", "alive")
    assert await finish_run(qpool, run.run_id, "alive", "succeeded")
    assert [r.run_id for r in await claim_runs(qpool, "alive", 10, LEASE)] == [later.run_id]


async def test_heartbeat_extends_leases_and_reports_cancels(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    thread_id = await _new_thread(qpool)
    run = await _create(qpool, qgraph, thread_id)
    [claimed] = await claim_runs(qpool, "w1", 10, 1.0)

    assert await heartbeat(qpool, "w1", {run.run_id: claimed.attempt}, 600.0) == set()
    extended = await get_run(qpool, run.run_id)
    assert extended is not None and extended.lease_expires_at is not None
    assert claimed.lease_expires_at is not None
    assert (extended.lease_expires_at - claimed.lease_expires_at).total_seconds() > 500
    assert await heartbeat(qpool, "w1", {}, 600.0) == set()

    cancelled = await cancel_run(qpool, thread_id, run.run_id, "interrupt")

    assert cancelled.cancel_action == "interrupt"
    assert await heartbeat(qpool, "w1", {run.run_id: claimed.attempt}, 600.0) == {run.run_id}
    # rollback is stronger and is kept over a later interrupt
    await cancel_run(qpool, thread_id, run.run_id, "rollback")
    await cancel_run(qpool, thread_id, run.run_id, "interrupt")
    current = await get_run(qpool, run.run_id)
    assert current is not None and current.cancel_action == "rollback"


async def test_release_hands_the_run_back(qpool: Pool, qgraph: GraphVersion) -> None:
    thread_id = await _new_thread(qpool)
    run = await _create(qpool, qgraph, thread_id)
    await claim_runs(qpool, "w1", 10, LEASE)

    assert not await release_run(qpool, run.run_id, "w2")
    assert await release_run(qpool, run.run_id, "w1")

    released = await get_run(qpool, run.run_id)
    assert released is not None
    assert (released.status, released.lease_owner, released.lease_expires_at) == (
        "pending",
        None,
        None,
    )
    assert await _status(qpool, thread_id) == "busy"
    [again] = await claim_runs(qpool, "w2", 10, LEASE)
    assert (again.run_id, again.attempt) == (run.run_id, 2)


@pytest.mark.parametrize(
    ("state", "status", "thread_status"),
    [
        ("succeeded", "success", "idle"),
        ("partially_succeeded", "success", "idle"),
        ("waiting_for_person", "success", "interrupted"),
        ("waiting_for_tool", "success", "interrupted"),
        ("failed", "error", "error"),
        ("timed_out", "timeout", "error"),
        ("cancelled", "interrupted", "idle"),
    ],
)
async def test_finish_sets_the_thread_status(
    qpool: Pool, qgraph: GraphVersion, state: Any, status: str, thread_status: str
) -> None:
    thread_id = await _new_thread(qpool)
    run = await _create(qpool, qgraph, thread_id)
    await claim_runs(qpool, "w1", 10, LEASE)

    assert await finish_run(qpool, run.run_id, "w1", state, "boom")

    finished = await get_run(qpool, run.run_id)
    assert finished is not None
    assert (finished.status, finished.state, finished.error) == (status, state, "boom")
    assert await _status(qpool, thread_id) == thread_status
    assert not await finish_run(qpool, run.run_id, "w1", "succeeded")  # only once
    # The end is journaled with the status, once.
    events = await journal.read_after(qpool, run.run_id)
    assert [(e.seq, e.event) for e in events] == [(1, "metadata"), (2, "end")]


async def test_a_worker_that_lost_its_lease_journals_no_end(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    thread_id = await _new_thread(qpool)
    taken = await _create(qpool, qgraph, thread_id)
    handed_back = await _create(qpool, qgraph, await _new_thread(qpool))
    [dead, _] = await claim_runs(qpool, "dead", 10, EXPIRED)
    assert dead.run_id == taken.run_id
    [again] = await claim_runs(qpool, "alive", 1, LEASE)  # the expired one, oldest first
    assert again.run_id == taken.run_id
    assert await release_run(qpool, handed_back.run_id, "dead")

    # Both outcomes are refused, and neither run's journal gets an end.
    assert not await finish_run(qpool, taken.run_id, "dead", "failed", "lost")
    assert not await finish_run(qpool, handed_back.run_id, "dead", "succeeded")
    for run_id in (taken.run_id, handed_back.run_id):
        assert [e.event for e in await journal.read_after(qpool, run_id)] == ["metadata"]
    current = await get_run(qpool, taken.run_id)
    assert current is not None and (current.status, current.error) == ("running", None)
    assert await _status(qpool, thread_id) == "busy"

    # The worker that holds the lease ends the run: exactly one end, after the rest.
    await journal.append(qpool, taken.run_id, "values", {"text": "hi"})
    assert await finish_run(qpool, taken.run_id, "alive", "succeeded")
    events = await journal.read_after(qpool, taken.run_id)
    assert [(e.seq, e.event) for e in events] == [(1, "metadata"), (2, "values"), (3, "end")]


# --------------------------------------------------------------------------- cancel, delete


async def test_cancel_and_delete(qpool: Pool, qgraph: GraphVersion) -> None:
    thread_id = await _new_thread(qpool)
    run = await _create(qpool, qgraph, thread_id)
    with pytest.raises(RunNotFound):
        await cancel_run(qpool, thread_id, unique("r"))
    with pytest.raises(RunActive):
        await delete_run(qpool, thread_id, run.run_id)
    with pytest.raises(ValueError, match="cancel action"):
        await cancel_run(qpool, thread_id, run.run_id, "explode")

    cancelled = await cancel_run(qpool, thread_id, run.run_id)

    assert cancelled.status == "interrupted"
    assert await _status(qpool, thread_id) == "idle"
    assert await cancel_run(qpool, thread_id, run.run_id) == cancelled  # finished: unchanged
    await delete_run(qpool, thread_id, run.run_id)
    assert await get_run(qpool, run.run_id) is None
    with pytest.raises(RunNotFound):
        await delete_run(qpool, thread_id, run.run_id)


# webhook=False: the end commits in one round trip, the refusal is read after it.
@pytest.mark.parametrize("webhook", [True, False])
async def test_a_finish_to_a_state_the_run_cannot_reach_is_refused(
    qpool: Pool, qgraph: GraphVersion, webhook: bool
) -> None:
    thread_id = await _new_thread(qpool)
    run = await _create(qpool, qgraph, thread_id)
    await claim_runs(qpool, "w1", 10, LEASE)

    with pytest.raises(ValueError, match="'queued' is not how a run ends"):
        # Handing a run back is release_run's, which clears its lease.
        await finish_run(qpool, run.run_id, "w1", "queued")
    # A row changed behind the table's back (by hand): the finish is refused, not forced.
    async with qpool.connection() as conn:
        await conn.execute(
            "UPDATE plait_runs SET state = 'succeeded' WHERE run_id = %s", (run.run_id,)
        )
    with pytest.raises(ForbiddenTransition, match="'succeeded' to 'failed'"):
        await finish_run(qpool, run.run_id, "w1", "failed", "boom", webhook=webhook)
    assert not await finish_run(qpool, run.run_id, "w2", "failed", "boom", webhook=webhook)
    current = await get_run(qpool, run.run_id)
    assert current is not None and (current.status, current.error) == ("running", None)
    assert [e.event for e in await journal.read_after(qpool, run.run_id)] == ["metadata"]
