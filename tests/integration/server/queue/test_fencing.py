"""A worker that lost a run's lease cannot write for it any more (fencing, real Postgres).

Each test takes a run from a worker the way a partition does: ``stalled``
claims it under a lease that is already over, another claim takes it over,
and ``stalled`` then tries every write an attempt makes. Each write must be
refused and leave nothing behind, while the new holder's same write goes
through. The claim bumps the attempt, so a worker that claims its own run
again (``--id`` reused, or cut off and back) is fenced from its old attempt too.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from plait.engine.store.pool import Pool
from plait.engine.store.tool_results import RecordedResult
from plait.server.approvals import records
from plait.server.graphs.versions import GraphVersion
from plait.server.queue import journal
from plait.server.queue.fenced import FencedCheckpointer, FencedToolResultStore
from plait.server.queue.leases import Lease, LeaseLost, fenced_transaction
from plait.server.queue.runs import (
    Run,
    claim_runs,
    create_run,
    finish_run,
    get_run,
    heartbeat,
    release_run,
)
from plait.server.queue.threads import create_thread
from plait.server.workers.execution import delete_checkpoints
from tests.integration.server.queue.conftest import unique
from tests.polling import until

pytestmark = pytest.mark.postgres

LEASE = 30.0
#: A lease that is already over: stands for a worker that stalled or was cut off.
EXPIRED = -1.0


async def _taken_over(pool: Pool, graph: GraphVersion, *, by: str = "alive") -> tuple[Run, Run]:
    """A run claimed by ``stalled`` (lease over at once), then by ``by``: (stale, current)."""
    thread = await create_thread(pool, thread_id=unique("t"))
    created, _ = await create_run(
        pool, thread_id=thread["thread_id"], graph=graph, kwargs={"input": {}}, metadata={}
    )
    [stale] = await claim_runs(pool, "stalled", 10, EXPIRED)
    [current] = await claim_runs(pool, by, 10, LEASE)
    assert stale.run_id == current.run_id == created.run_id
    assert (stale.attempt, current.attempt) == (1, 2)
    return stale, current


async def _claimed_by_slow(pool: Pool, graph: GraphVersion) -> Run:
    """A new run claimed by ``slow`` under a lease that is already over."""
    thread = await create_thread(pool, thread_id=unique("t"))
    await create_run(
        pool, thread_id=thread["thread_id"], graph=graph, kwargs={"input": {}}, metadata={}
    )
    [claimed] = await claim_runs(pool, "slow", 10, EXPIRED)
    return claimed


def _config(run: Run) -> dict[str, Any]:
    return {"configurable": {"thread_id": run.thread_id, "checkpoint_ns": ""}}


async def _checkpoint_rows(pool: Pool, thread_id: str) -> tuple[int, int, int]:
    """How many checkpoints, blobs and writes the thread has."""
    async with pool.connection() as conn:
        counts = []
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            cursor = await conn.execute(
                f"SELECT count(*) AS n FROM {table} WHERE thread_id = %s", (thread_id,)
            )
            row = await cursor.fetchone()
            assert row is not None
            counts.append(int(row["n"]))
    return counts[0], counts[1], counts[2]


async def test_a_stale_attempt_cannot_write_checkpoints(qpool: Pool, qgraph: GraphVersion) -> None:
    """``aput`` (with channel blobs) and ``aput_writes``: refused, nothing written."""
    stale, current = await _taken_over(qpool, qgraph)
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"steps": ["a", "b"]}  # not a primitive: stored as a blob
    versions = {"steps": "1"}

    late = FencedCheckpointer(qpool, stale.lease)
    with pytest.raises(LeaseLost, match="checkpoint refused"):
        await late.aput(_config(stale), checkpoint, {"source": "loop", "step": 1}, versions)
    written = {
        "configurable": {**_config(stale)["configurable"], "checkpoint_id": checkpoint["id"]}
    }
    with pytest.raises(LeaseLost):
        await late.aput_writes(written, [("steps", ["c"])], "task-1")
    assert await _checkpoint_rows(qpool, stale.thread_id) == (0, 0, 0)

    holder = FencedCheckpointer(qpool, current.lease)
    await holder.aput(_config(current), checkpoint, {"source": "loop", "step": 1}, versions)
    await holder.aput_writes(written, [("steps", ["c"])], "task-1")
    assert await _checkpoint_rows(qpool, current.thread_id) == (1, 1, 1)
    # Reads are not fenced: the stale worker can still look (and learns nothing new).
    assert await late.aget_tuple(_config(stale)) is not None


async def test_a_stale_attempt_stops_at_its_first_checkpoint(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    """Through LangGraph: the stale attempt's graph fails with LeaseLost, no state written."""

    class State(TypedDict):
        steps: list[str]

    builder = StateGraph(State)
    builder.add_node("step", lambda state: {"steps": [*state["steps"], "late"]})
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    stale, _ = await _taken_over(qpool, qgraph)
    graph = builder.compile(checkpointer=FencedCheckpointer(qpool, stale.lease))

    with pytest.raises(LeaseLost):
        await graph.ainvoke({"steps": []}, _config(stale), durability="sync")

    assert await _checkpoint_rows(qpool, stale.thread_id) == (0, 0, 0)


async def test_a_stale_attempt_can_neither_read_nor_record_tool_results(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    """It learns it lost the run before it would call the tool, and records nothing after."""
    stale, current = await _taken_over(qpool, qgraph)
    record = RecordedResult.now({"charged": "order-1"})
    where = {"thread_id": stale.thread_id, "run_id": stale.run_id, "node": "pay", "tool": "charge"}

    late = FencedToolResultStore(qpool, stale.lease)
    with pytest.raises(LeaseLost, match="tool call refused"):
        await late.get("key-1")
    with pytest.raises(LeaseLost, match="tool result refused"):
        await late.put("key-1", record, args={"order": "order-1"}, **where)

    holder = FencedToolResultStore(qpool, current.lease)
    assert await holder.get("key-1") is None
    stored = await holder.put("key-1", record, args={"order": "order-1"}, **where)
    assert stored.value == {"charged": "order-1"}
    assert (await holder.get("key-1")) == stored
    with pytest.raises(LeaseLost):
        await late.get("key-1")  # even though a record exists now


async def test_a_stale_attempt_cannot_begin_or_park_a_non_idempotent_call(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    """The intent a non-idempotent call records before it acts is fenced: no stale effect."""
    stale, current = await _taken_over(qpool, qgraph)
    where = {"thread_id": stale.thread_id, "run_id": stale.run_id, "node": "pay", "tool": "charge"}

    late = FencedToolResultStore(qpool, stale.lease)
    with pytest.raises(LeaseLost, match="tool call refused"):
        await late.begin("key-2", 1, answered_run=None, args={"order": "o-2"}, **where)
    holder = FencedToolResultStore(qpool, current.lease)
    assert await holder.intent("key-2") is None
    assert await holder.begin("key-2", 1, answered_run=None, args={"order": "o-2"}, **where)
    with pytest.raises(LeaseLost, match="parking a tool call refused"):
        await late.park("key-2")
    intent = await holder.intent("key-2")
    assert intent is not None and (intent.attempts, intent.parked) == (1, False)
    await holder.park("key-2")
    parked = await holder.intent("key-2")
    assert parked is not None and parked.parked


async def test_a_stale_attempt_cannot_record_approvals(qpool: Pool, qgraph: GraphVersion) -> None:
    stale, current = await _taken_over(qpool, qgraph)
    interrupt = {"id": "i-1", "value": {"kind": "approval", "node": "ask", "action": "pay"}}

    with pytest.raises(LeaseLost, match="recording approvals refused"):
        async with fenced_transaction(qpool, stale.lease, "recording approvals") as conn:
            await records.record_interrupts(conn, stale, [interrupt])
    assert await records.list_approvals(qpool, None, thread_id=stale.thread_id) == []

    async with fenced_transaction(qpool, current.lease, "recording approvals") as conn:
        [recorded] = await records.record_interrupts(conn, current, [interrupt])
    assert recorded["interrupt_id"] == "i-1"


async def test_a_stale_attempt_cannot_delete_the_runs_checkpoints(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    stale, current = await _taken_over(qpool, qgraph)
    checkpoint = empty_checkpoint()
    metadata = {"source": "loop", "step": 1, "run_id": current.run_id}
    config = {**_config(current), "metadata": {"run_id": current.run_id}}
    await FencedCheckpointer(qpool, current.lease).aput(config, checkpoint, metadata, {})

    with pytest.raises(LeaseLost, match="deleting checkpoints refused"):
        await delete_checkpoints(qpool, stale, stale.lease)
    assert (await _checkpoint_rows(qpool, current.thread_id))[0] == 1
    await delete_checkpoints(qpool, current, current.lease)
    assert (await _checkpoint_rows(qpool, current.thread_id))[0] == 0


async def test_a_worker_that_claims_its_run_again_is_fenced_from_its_old_attempt(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    """Same worker id, two claims: only the newer attempt may journal, beat, end or release."""
    old, new = await _taken_over(qpool, qgraph, by="stalled")
    run_id = old.run_id

    events = {run_id: [("values", {"late": True})]}
    refused = await journal.append_runs(qpool, events, owner="stalled", attempts={run_id: 1})
    assert refused == {}
    assert await heartbeat(qpool, "stalled", {run_id: old.attempt}, LEASE) == {run_id}
    assert not await finish_run(qpool, run_id, "stalled", "failed", "late", attempt=old.attempt)
    assert not await release_run(qpool, run_id, "stalled", old.attempt)
    current = await get_run(qpool, run_id)
    assert current is not None and (current.status, current.attempt) == ("running", 2)

    assert await heartbeat(qpool, "stalled", {run_id: new.attempt}, LEASE) == set()
    written = await journal.append_runs(qpool, events, owner="stalled", attempts={run_id: 2})
    assert written == {run_id: 2}
    assert await finish_run(qpool, run_id, "stalled", "succeeded", attempt=new.attempt)
    assert [(e.seq, e.event) for e in await journal.read_after(qpool, run_id)] == [
        (1, "metadata"),
        (2, "values"),
        (3, "end"),
    ]


async def test_a_claim_cannot_take_a_run_while_a_fenced_write_is_open(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    """The fence holds the run row until the write commits: a takeover waits for it."""
    claimed = await _claimed_by_slow(qpool, qgraph)

    async with fenced_transaction(qpool, claimed.lease, "a test write"):
        # The lease is over, yet the row is held: the claim skips it (SKIP LOCKED).
        assert await claim_runs(qpool, "other", 10, LEASE) == []
    [taken] = await claim_runs(qpool, "other", 10, LEASE)
    assert taken.run_id == claimed.run_id and taken.lost_attempts == 1


async def test_a_fenced_write_waits_for_a_takeover_in_progress_and_is_refused(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    """The other order: the claim's row lock first, then the fence sees the new holder."""
    claimed = await _claimed_by_slow(qpool, qgraph)
    async with qpool.connection() as taker, taker.transaction():
        # A takeover caught between its row lock and its commit.
        await taker.execute(
            "UPDATE plait_runs SET lease_owner = 'other', attempt = attempt + 1 WHERE run_id = %s",
            (claimed.run_id,),
        )
        write = asyncio.create_task(_fenced_write(qpool, claimed.lease))
        await until(lambda: _waits_on_lock(qpool, "plait_fence"), "the fence to wait on the row")
        assert not write.done()
    with pytest.raises(LeaseLost):
        await write


async def test_a_step_waits_for_a_takeover_in_progress_and_stores_nothing(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    """A step's one statement (held writes, blobs, checkpoint) behind the fence: refused whole."""
    claimed = await _claimed_by_slow(qpool, qgraph)
    saver = FencedCheckpointer(qpool, claimed.lease)
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"steps": ["a"]}
    config = {"configurable": {**_config(claimed)["configurable"], "checkpoint_id": "parent"}}

    async with qpool.connection() as taker, taker.transaction():
        await taker.execute(
            "UPDATE plait_runs SET lease_owner = 'other', attempt = attempt + 1 WHERE run_id = %s",
            (claimed.run_id,),
        )

        async def step() -> None:
            async with saver.steps_in_one_trip():
                await saver.aput_writes(config, [("steps", ["a"])], "task-1")
                await saver.aput(config, checkpoint, {"source": "loop", "step": 1}, {"steps": "1"})

        write = asyncio.create_task(step())
        await until(lambda: _waits_on_lock(qpool, "plait_fence"), "the step to wait on the row")
        assert not write.done()
    with pytest.raises(LeaseLost, match="checkpoint refused"):
        await write
    assert await _checkpoint_rows(qpool, claimed.thread_id) == (0, 0, 0)


async def _fenced_write(pool: Pool, lease: Lease) -> None:
    async with fenced_transaction(pool, lease, "a test write") as conn:
        await conn.execute("SELECT 1")


async def _waits_on_lock(pool: Pool, query_part: str) -> bool:
    """Whether a session running a query that contains ``query_part`` waits for a lock."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND query LIKE '%%' || %s || '%%'",
            (query_part,),
        )
        return await cursor.fetchone() is not None


async def test_a_claim_leaves_the_workers_own_runs_to_it(qpool: Pool, qgraph: GraphVersion) -> None:
    """A worker back from a cut-off goes on with (or learns it lost) the runs it executes."""
    thread = await create_thread(qpool, thread_id=unique("t"))
    await create_run(
        qpool, thread_id=thread["thread_id"], graph=qgraph, kwargs={"input": {}}, metadata={}
    )
    [claimed] = await claim_runs(qpool, "back", 10, EXPIRED)

    assert await claim_runs(qpool, "back", 10, LEASE, executing=[claimed.run_id]) == []
    [again] = await claim_runs(qpool, "back", 10, LEASE)
    assert again.run_id == claimed.run_id and again.attempt == 2


async def test_a_finished_step_resets_the_lost_attempts(qpool: Pool, qgraph: GraphVersion) -> None:
    """Lost attempts count in a row: the first checkpoint an attempt saves resets them."""
    thread = await create_thread(qpool, thread_id=unique("t"))
    await create_run(
        qpool, thread_id=thread["thread_id"], graph=qgraph, kwargs={"input": {}}, metadata={}
    )
    for _ in range(3):
        [claimed] = await claim_runs(qpool, "dying", 10, EXPIRED)
    assert claimed.lost_attempts == 2
    saver = FencedCheckpointer(qpool, claimed.lease, lost_attempts=True)
    await saver.aput(_config(claimed), empty_checkpoint(), {"source": "loop", "step": 1}, {})
    current = await get_run(qpool, claimed.run_id)
    assert current is not None and current.lost_attempts == 0

    [again] = await claim_runs(qpool, "next", 10, LEASE)
    assert (again.attempt, again.lost_attempts) == (4, 1)
