"""How events reach subscribers: in the notification itself, and written in group commits."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from plait.engine.store.pool import Pool
from plait.server.graphs.versions import GraphVersion, save_version
from plait.server.queue import journal
from plait.server.queue.journal import Followed, JournalEvent, JournalListener, RunGone
from plait.server.queue.journal_writer import JournalCommitter, JournalWriter
from plait.server.queue.runs import (
    claim_runs,
    create_run,
    creating_run,
    finish_run,
    first_event,
)
from plait.server.queue.threads import create_thread
from tests.integration.server.queue.conftest import spec_text, unique

pytestmark = pytest.mark.postgres

WAIT_SECONDS = 20.0


class CountingListener(JournalListener):
    """A listener that counts how often its subscribers read the table."""

    reads = 0

    async def _read(self, run_id: str, after: int) -> tuple[str | None, list[JournalEvent]]:
        self.reads += 1
        return await super()._read(run_id, after)


@pytest.fixture
async def listener(qpool: Pool) -> AsyncIterator[CountingListener]:
    # Polling disabled (an hour): only notifications and reconnects wake subscribers.
    started = CountingListener(qpool, poll_seconds=3600.0, reconnect_seconds=0.05)
    async with asyncio.timeout(WAIT_SECONDS):
        await started.start()
    yield started
    await started.stop()


async def _run_id(pool: Pool, graph: GraphVersion) -> str:
    thread = await create_thread(pool, thread_id=unique("t"))
    run, _ = await create_run(
        pool, thread_id=thread["thread_id"], graph=graph, kwargs={}, metadata={}
    )
    return run.run_id


async def _claimed_run(pool: Pool, graph: GraphVersion) -> tuple[str, str, int]:
    """A new run claimed by a worker of its own: its id, the worker and the attempt."""
    run_id = await _run_id(pool, graph)
    worker = unique("w")
    claimed = {run.run_id: run for run in await claim_runs(pool, worker, 100, 60.0)}
    return run_id, worker, claimed[run_id].attempt


async def test_notified_events_need_no_query(
    qpool: Pool, qgraph: GraphVersion, listener: CountingListener
) -> None:
    run_id = await _run_id(qpool, qgraph)
    received: list[JournalEvent] = []
    seen = asyncio.Event()

    async def follow() -> None:
        async for event in listener.subscribe(run_id):
            received.append(event)
            seen.set()

    task = asyncio.create_task(follow())
    async with asyncio.timeout(WAIT_SECONDS):
        await seen.wait()
    reads = listener.reads
    for n in range(5):
        await journal.append(qpool, run_id, "values", {"n": n})
    await journal.append(qpool, run_id, "end", None)
    async with asyncio.timeout(WAIT_SECONDS):
        await task

    assert received[0] == first_event(run_id)
    assert [(e.seq, e.event, e.data) for e in received[1:]] == [
        *((n + 2, "values", {"n": n}) for n in range(5)),
        (7, "end", None),
    ]
    assert listener.reads == reads  # every event came in its notification
    assert received == await journal.read_after(qpool, run_id)


class TimedListener(JournalListener):
    """A listener that notes when its subscribers read the table (loop time)."""

    def __init__(self, pool: Pool, reads: int, **options: Any) -> None:
        super().__init__(pool, **options)
        self.read_at: list[float] = []
        self.enough = asyncio.Event()
        self._wanted = reads

    async def _read(self, run_id: str, after: int) -> tuple[str | None, list[JournalEvent]]:
        self.read_at.append(asyncio.get_running_loop().time())
        if len(self.read_at) >= self._wanted:
            self.enough.set()
        return await super()._read(run_id, after)


async def test_an_idle_subscriber_polls_less_and_less_while_listening(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    # A run queued behind others streams nothing for a while: its subscriber's
    # safety re-reads space out (0.1, 0.2, 0.4, 0.8 s here) instead of coming
    # every 0.1 s, while the LISTEN connection guarantees nothing is missed.
    timed = TimedListener(qpool, 5, poll_seconds=0.1, max_poll_seconds=0.8)
    async with asyncio.timeout(WAIT_SECONDS):
        await timed.start()
    run_id = await _run_id(qpool, qgraph)
    task = asyncio.create_task(_collect(timed, run_id))
    try:
        async with asyncio.timeout(WAIT_SECONDS):
            await timed.enough.wait()
        gaps = [later - earlier for earlier, later in itertools.pairwise(timed.read_at[:5])]
        # Lower bounds only: a timer never fires early, a busy machine only makes gaps longer.
        assert [gap >= least for gap, least in zip(gaps, (0.1, 0.2, 0.4, 0.8), strict=True)] == [
            True
        ] * 4, gaps
        # A notification still wakes it, whatever its next re-read would wait.
        await journal.append(qpool, run_id, "end", None)
        async with asyncio.timeout(WAIT_SECONDS):
            events = await task
        assert [e.event for e in events] == ["metadata", "end"]
    finally:
        task.cancel()
        await timed.stop()


async def test_a_thread_s_new_run_wakes_only_those_waiting_for_that_thread(
    qpool: Pool, qgraph: GraphVersion, listener: CountingListener
) -> None:
    """A stream that follows a thread from run to run waits for its next run without
    asking for it: creating the run announces its thread (polling is off here), also one
    whose id is longer than a notification can carry."""
    named = unique("t") + " with spaces " + "x" * 9000
    followed = (await create_thread(qpool, thread_id=named))["thread_id"]
    other = (await create_thread(qpool, thread_id=unique("t")))["thread_id"]
    with listener.new_runs(followed) as new_runs, listener.new_runs(other) as other_runs:
        waiting = asyncio.create_task(new_runs.wait())
        waiting_other = asyncio.create_task(other_runs.wait())

        await create_run(qpool, thread_id=followed, graph=qgraph, kwargs={}, metadata={})

        async with asyncio.timeout(WAIT_SECONDS):
            await waiting
        # Woken in the same pass as the followed thread's, had it been announced.
        assert not waiting_other.done()
        waiting_other.cancel()


async def test_a_batch_too_big_to_notify_is_read(
    qpool: Pool, qgraph: GraphVersion, listener: CountingListener
) -> None:
    run_id = await _run_id(qpool, qgraph)
    big = {"text": "x" * (journal.NOTIFY_LIMIT + 100)}
    task = asyncio.create_task(_collect(listener, run_id))
    await journal.append_many(qpool, run_id, [("values", {"n": 1}), ("values", big)])
    await journal.append(qpool, run_id, "end", None)

    events = await task

    assert [(e.seq, e.event) for e in events] == [
        (1, "metadata"),
        (2, "values"),
        (3, "values"),
        (4, "end"),
    ]
    assert events[2].data == big


async def test_text_with_quotes_and_backslashes_arrives_as_sent(
    qpool: Pool, qgraph: GraphVersion, listener: CountingListener
) -> None:
    # What an array literal would have to escape, in the notification and in the table.
    tricky = {"text": 'say "hi" \\ {a,b} NULL\n\té 🧵', "list": ['"', "\\", "", "NULL", "}"]}
    run_id = await _run_id(qpool, qgraph)
    task = asyncio.create_task(_collect(listener, run_id))
    await journal.append_many(
        qpool, run_id, [("values", tricky), ("messages", [tricky, {"k": "v"}])]
    )
    await journal.append(qpool, run_id, "end", None)

    events = await task

    assert [(e.event, e.data) for e in events[1:3]] == [
        ("values", tricky),
        ("messages", [tricky, {"k": "v"}]),
    ]
    assert events == await journal.read_after(qpool, run_id)


async def test_a_committer_writes_many_runs_and_a_gone_one_fails_alone(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    runs = [await _run_id(qpool, qgraph) for _ in range(3)]
    async with JournalCommitter(qpool) as committer:
        writers = [JournalWriter(run_id, committer) for run_id in [*runs, "no-such-run"]]
        for n in range(4):
            for writer in writers:
                writer.emit("custom", {"n": n})
        for writer in writers[:3]:
            await writer.close()
        with pytest.raises(RunGone):
            await writers[3].close()

    for run_id in runs:
        events = await journal.read_after(qpool, run_id)
        assert [(e.seq, e.data) for e in events[1:]] == [(n + 2, {"n": n}) for n in range(4)]


async def test_a_closed_committer_gives_its_connection_back_open_and_as_it_took_it(
    lone_pool: Pool, caplog: pytest.LogCaptureFixture
) -> None:
    """Its connection plans the append once (a session setting: ``_connection``). Closed,
    the committer resets the setting and gives the connection back open, instead of
    closed for the pool to discard with a warning, which `plait serve` logged when it
    stopped after a run."""
    caplog.set_level(logging.WARNING, logger="psycopg.pool")
    graph = await save_version(lone_pool, spec_text(unique("g")), file="<test>")
    run_id = await _run_id(lone_pool, graph)
    async with lone_pool.connection() as conn:
        backend = conn.info.backend_pid
    async with JournalCommitter(lone_pool) as committer:
        writer = JournalWriter(run_id, committer)
        writer.emit("custom", {"n": 1})
        await writer.close()
    async with lone_pool.connection() as conn:
        setting = await (await conn.execute("SHOW plan_cache_mode")).fetchone()
        assert conn.info.backend_pid == backend
    assert setting == {"plan_cache_mode": "auto"}
    assert [r.getMessage() for r in caplog.records if r.name == "psycopg.pool"] == []


class CountingCommitter(JournalCommitter):
    """A committer that notes each round it writes: each run's event names, and when its
    first round began to be written (loop time)."""

    def __init__(self, pool: Pool, **options: Any) -> None:
        super().__init__(pool, **options)
        self.rounds: list[dict[str, list[str]]] = []
        self.first_written = asyncio.Event()
        self.first_at = 0.0

    async def _append(
        self, batches: dict[str, list[tuple[str, Any]]], attempts: dict[str, int]
    ) -> dict[str, int]:
        if not self.rounds:
            self.first_at = asyncio.get_running_loop().time()
            self.first_written.set()
        self.rounds.append(
            {run_id: [event for event, _ in items] for run_id, items in batches.items()}
        )
        return await super()._append(batches, attempts)


async def test_a_round_lingers_for_more_events_until_a_closing_writer_hurries_it(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    run_id = await _run_id(qpool, qgraph)
    # An hour's linger: only the writer's close can have the round written in time.
    async with CountingCommitter(qpool, linger=3600.0) as committer:
        writer = JournalWriter(run_id, committer)
        writer.emit("values", {"n": 0})
        for _ in range(5):
            await asyncio.sleep(0)  # the committer wakes, and lingers
        writer.emit("values", {"n": 1})
        writer.emit("custom", {"n": 2})
        assert committer.rounds == []
        async with asyncio.timeout(WAIT_SECONDS):
            await writer.close()

    assert committer.rounds == [{run_id: ["values", "values", "custom"]}]
    events = await journal.read_after(qpool, run_id)
    assert [(e.seq, e.event, e.data) for e in events[1:]] == [
        (2, "values", {"n": 0}),
        (3, "values", {"n": 1}),
        (4, "custom", {"n": 2}),
    ]


async def test_a_round_waits_its_linger_for_each_run_it_holds(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    runs = [await _run_id(qpool, qgraph) for _ in range(3)]
    loop = asyncio.get_running_loop()
    # 50 ms a run, no cap in reach: a round of three runs waits at least 150 ms.
    async with CountingCommitter(qpool, linger=0.05, most=60.0) as committer:
        start = loop.time()
        writers = [JournalWriter(run_id, committer) for run_id in runs]
        writers[0].emit("values", {"n": 0})
        for _ in range(5):
            await asyncio.sleep(0)  # the committer wakes, and lingers for one run
        for writer in writers[1:]:
            writer.emit("values", {"n": 1})
        async with asyncio.timeout(WAIT_SECONDS):
            await committer.first_written.wait()
        for writer in writers:
            await writer.close()

    assert committer.rounds[0] == {run_id: ["values"] for run_id in runs}
    # A lower bound only: a busy machine makes it later, never earlier.
    assert committer.first_at - start >= 0.15


async def test_a_finishing_run_writes_its_last_events_with_its_end(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    run_id, worker, attempt = await _claimed_run(qpool, qgraph)
    async with CountingCommitter(qpool, linger=3600.0, owner=worker) as committer:
        writer = JournalWriter(run_id, committer, attempt)
        writer.emit("values", {"n": 0})
        writer.emit("values", {"n": 1})
        async with asyncio.timeout(WAIT_SECONDS):
            last = await writer.drain()
        assert last == [("values", {"n": 0}), ("values", {"n": 1})]
        assert await finish_run(qpool, run_id, worker, "succeeded", attempt=attempt, events=last)

    # Never written on their own, and no empty round written for them either.
    assert committer.rounds == []
    events = await journal.read_after(qpool, run_id)
    assert [(e.seq, e.event, e.data) for e in events] == [
        (1, "metadata", events[0].data),
        (2, "values", {"n": 0}),
        (3, "values", {"n": 1}),
        (4, "end", None),
    ]


@pytest.mark.parametrize("size", [10, journal.NOTIFY_LIMIT + 100])
async def test_a_subscriber_gets_a_finishing_run_s_last_events_and_end(
    qpool: Pool, qgraph: GraphVersion, listener: CountingListener, size: int
) -> None:
    # Small: in the finish's notification. Too big to notify: read from the table.
    run_id, worker, attempt = await _claimed_run(qpool, qgraph)
    task = asyncio.create_task(_collect(listener, run_id))
    last = {"text": "x" * size}

    assert await finish_run(
        qpool,
        run_id,
        worker,
        "succeeded",
        attempt=attempt,
        events=[("values", {"n": 1}), ("values", last)],
    )

    events = await task
    assert [(e.seq, e.event) for e in events] == [
        (1, "metadata"),
        (2, "values"),
        (3, "values"),
        (4, "end"),
    ]
    assert events[2].data == last
    assert events == await journal.read_after(qpool, run_id)


class DeafListener(CountingListener):
    """A listener that hears no notification: only what its own process hands it."""

    def _dispatch(self, payload: str) -> None:
        return


async def test_a_finishing_run_s_end_reaches_this_process_s_streams_at_its_commit(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    """A worker in the API's process gives its listener the end it commits: the run's
    stream ends without the notification, and without reading the table."""
    deaf = DeafListener(qpool, poll_seconds=3600.0)
    async with asyncio.timeout(WAIT_SECONDS):
        await deaf.start()
    try:
        followed = await _followed_run(qpool, qgraph, deaf)
        worker = unique("w")
        [claimed] = [
            r for r in await claim_runs(qpool, worker, 100, 60.0) if r.run_id == followed.run_id
        ]
        last = [("values", {"n": 1}), ("values", {"n": 2})]
        assert await finish_run(
            qpool,
            followed.run_id,
            worker,
            "succeeded",
            attempt=claimed.attempt,
            events=last,
            listener=deaf,
        )
        # After the metadata event, which the API hands its stream itself.
        async with asyncio.timeout(WAIT_SECONDS):
            events = [event async for batch in followed.batches(1) for event in batch]
    finally:
        await deaf.stop()

    assert [(e.seq, e.event, e.data) for e in events] == [
        (2, "values", {"n": 1}),
        (3, "values", {"n": 2}),
        (4, "end", None),
    ]
    assert events == (await journal.read_after(qpool, followed.run_id))[1:]
    assert deaf.reads == 0


async def test_a_lost_lease_writes_neither_the_last_events_nor_the_end(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    run_id, _, attempt = await _claimed_run(qpool, qgraph)

    finished = await finish_run(
        qpool, run_id, unique("other"), "succeeded", attempt=attempt, events=[("values", {})]
    )

    assert not finished
    assert [e.event for e in await journal.read_after(qpool, run_id)] == ["metadata"]


async def _collect(listener: JournalListener, run_id: str) -> list[JournalEvent]:
    async with asyncio.timeout(WAIT_SECONDS):
        return [event async for event in listener.subscribe(run_id)]


async def _followed_run(pool: Pool, graph: GraphVersion, listener: JournalListener) -> Followed:
    """A new run, followed from inside its creation, before the commit (as the API does)."""
    thread = await create_thread(pool, thread_id=unique("t"))
    async with creating_run(pool, thread_id=thread["thread_id"]) as creation:
        followed = listener.follow(creation.run_id)
        await creation.lock()
        await creation.insert(graph=graph, kwargs={}, metadata={}, multitask_strategy="reject")
    assert creation.created()[0].run_id == followed.run_id
    return followed


async def _gathered(followed: Followed) -> list[JournalEvent]:
    async with asyncio.timeout(WAIT_SECONDS):
        return [event async for batch in followed.batches() for event in batch]


async def test_a_run_followed_before_its_commit_streams_every_event_with_no_read(
    qpool: Pool, qgraph: GraphVersion, listener: CountingListener
) -> None:
    followed = await _followed_run(qpool, qgraph, listener)
    run_id = followed.run_id
    # Written before anyone reads the stream: they wait in the subscription.
    await journal.append_many(qpool, run_id, [("values", {"n": 1}), ("values", {"n": 2})])
    await journal.append(qpool, run_id, "end", None)

    events = await _gathered(followed)

    assert [(e.seq, e.event) for e in events] == [
        (1, "metadata"),
        (2, "values"),
        (3, "values"),
        (4, "end"),
    ]
    assert events == await journal.read_after(qpool, run_id)
    assert listener.reads == 0


async def test_a_followed_run_reads_what_its_listener_may_have_missed(
    qpool: Pool, qgraph: GraphVersion, listener: CountingListener
) -> None:
    # Followed while the LISTEN connection is down: nothing it announced can be trusted.
    await listener.stop()
    followed = await _followed_run(qpool, qgraph, listener)
    await journal.append(qpool, followed.run_id, "end", None)

    events = await _gathered(followed)

    assert [e.event for e in events] == ["metadata", "end"]
    assert listener.reads == 1


async def test_a_followed_run_reads_again_after_its_listener_reconnects(
    qpool: Pool, qgraph: GraphVersion, listener: CountingListener
) -> None:
    followed = await _followed_run(qpool, qgraph, listener)
    run_id = followed.run_id
    gathering = asyncio.create_task(_gathered(followed))
    lost = listener.connections
    async with qpool.connection() as conn:
        await conn.execute("SELECT pg_terminate_backend(%s)", (listener.backend_pid,))
    # Appended while the listener may be down: only the reconnect's re-read can bring it.
    await journal.append(qpool, run_id, "values", {"n": 1})
    await journal.append(qpool, run_id, "end", None)

    events = await gathering

    assert listener.connections > lost
    assert [(e.seq, e.event) for e in events] == [(1, "metadata"), (2, "values"), (3, "end")]
    assert events == await journal.read_after(qpool, run_id)
