"""The run journal: seqs, NOTIFY, and the per-process listener, on real Postgres."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from plait.engine.store.pool import Pool, open_pool
from plait.server.graphs.versions import GraphVersion
from plait.server.queue import journal
from plait.server.queue.journal import JournalEvent, JournalListener, RunGone
from plait.server.queue.runs import create_run
from plait.server.queue.threads import create_thread
from tests.integration.server.queue.conftest import unique

pytestmark = pytest.mark.postgres

REPO = Path(__file__).resolve().parents[4]
#: Generous bound on waiting for events; the tests never wait for time to pass.
WAIT_SECONDS = 20.0


async def _run_id(pool: Pool, graph: GraphVersion) -> str:
    """A new run; its journal already holds its ``metadata`` event (seq 1)."""
    thread = await create_thread(pool, thread_id=unique("t"))
    run, _ = await create_run(
        pool, thread_id=thread["thread_id"], graph=graph, kwargs={}, metadata={}
    )
    return run.run_id


def _metadata(run_id: str) -> JournalEvent:
    """The event ``create_run`` journals with the run, so streams start before a claim."""
    return JournalEvent(run_id, 1, "metadata", {"run_id": run_id, "attempt": 1})


@pytest.fixture
async def listener(qpool: Pool) -> AsyncIterator[JournalListener]:
    # Polling disabled (an hour): only notifications and reconnects may wake subscribers.
    started = JournalListener(qpool, poll_seconds=3600.0, page_size=7, reconnect_seconds=0.05)
    async with asyncio.timeout(WAIT_SECONDS):
        await started.start()
    yield started
    await started.stop()


async def _collect(listener: JournalListener, run_id: str, after: int = 0) -> list[JournalEvent]:
    async with asyncio.timeout(WAIT_SECONDS):
        return [event async for event in listener.subscribe(run_id, after)]


async def test_append_numbers_events_per_run(qpool: Pool, qgraph: GraphVersion) -> None:
    one, two = await _run_id(qpool, qgraph), await _run_id(qpool, qgraph)

    assert await journal.append(qpool, one, "values", {"a": [0]}) == 2
    # Each run counts on its own: the second run's seq does not follow the first's.
    assert await journal.append(qpool, two, "values", {"x": 1}) == 2
    assert await journal.append_many(qpool, one, [("values", {"a": [1]}), ("end", None)]) == [3, 4]
    assert await journal.append_many(qpool, one, []) == []

    events = await journal.read_after(qpool, one, after=2)
    assert events == [
        JournalEvent(one, 3, "values", {"a": [1]}),
        JournalEvent(one, 4, "end", None),
    ]
    assert await journal.read_after(qpool, one, limit=2) == [
        _metadata(one),
        JournalEvent(one, 2, "values", {"a": [0]}),
    ]
    assert await journal.read_after(qpool, two) == [
        _metadata(two),
        JournalEvent(two, 2, "values", {"x": 1}),
    ]
    with pytest.raises(RunGone):
        await journal.append(qpool, unique("missing"), "values", {})


async def test_events_read_back_keep_their_data_in_the_order_written(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    # What a stream read from the table shows (a run opened later, a rejoined stream)
    # is what the live stream showed: jsonb would put `amount` before `order_id`.
    run_id = await _run_id(qpool, qgraph)
    arguments = {"order_id": "A-1", "amount": 120, "nested": {"zone": 1, "at": 2}}
    await journal.append(qpool, run_id, "values", {"__interrupt__": [{"arguments": arguments}]})

    [event] = await journal.read_after(qpool, run_id, after=1)
    [interrupt] = event.data["__interrupt__"]
    assert list(interrupt["arguments"]) == ["order_id", "amount", "nested"]
    assert list(interrupt["arguments"]["nested"]) == ["zone", "at"]


async def test_concurrent_appends_get_distinct_consecutive_seqs(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    run_id = await _run_id(qpool, qgraph)

    seqs = await asyncio.gather(
        *(journal.append(qpool, run_id, "custom", {"n": n}) for n in range(40))
    )

    # After the metadata event (seq 1): 40 distinct seqs, no gap.
    assert sorted(seqs) == list(range(2, 42))
    first, *events = await journal.read_after(qpool, run_id)
    assert first == _metadata(run_id)
    assert [e.seq for e in events] == list(range(2, 42))
    # Each event is stored under the seq its append returned.
    assert {e.data["n"]: e.seq for e in events} == dict(enumerate(seqs))


async def test_subscribers_see_every_event_in_order_once(
    qpool: Pool, qgraph: GraphVersion, listener: JournalListener, queue_database_url: str
) -> None:
    run_id = await _run_id(qpool, qgraph)
    subscribers = [asyncio.create_task(_collect(listener, run_id)) for _ in range(3)]

    # Another pool stands for another process's worker; appends race each other.
    async with await open_pool(queue_database_url, max_size=4) as writer:
        await asyncio.gather(
            *(journal.append(writer, run_id, "custom", {"n": n}) for n in range(30))
        )
        late = asyncio.create_task(_collect(listener, run_id, after=10))
        await journal.append(writer, run_id, "end", None)

    expected = await journal.read_after(qpool, run_id)
    # metadata, 30 custom events, end
    assert [e.seq for e in expected] == list(range(1, 33))
    assert expected[0] == _metadata(run_id)
    assert sorted(e.data["n"] for e in expected[1:-1]) == list(range(30))
    for task in subscribers:
        assert await task == expected
    assert await late == expected[10:]
    # Subscribers unregister when they end.
    assert run_id not in listener._wakers


async def test_a_late_subscriber_replays_a_finished_run(
    qpool: Pool, qgraph: GraphVersion, listener: JournalListener
) -> None:
    run_id = await _run_id(qpool, qgraph)
    await journal.append_many(qpool, run_id, [("values", {"n": n}) for n in range(20)])
    await journal.append(qpool, run_id, "end", None)

    events = await _collect(listener, run_id, after=3)

    # seq 1 is the metadata event, 2..21 the values, 22 the end.
    assert [e.seq for e in events] == list(range(4, 23))
    assert [e.data["n"] for e in events[:-1]] == list(range(2, 20))
    assert events[-1].event == "end"


async def test_events_from_another_process_reach_subscribers(
    qpool: Pool, qgraph: GraphVersion, listener: JournalListener, queue_database_url: str
) -> None:
    run_id = await _run_id(qpool, qgraph)
    subscriber = asyncio.create_task(_collect(listener, run_id))
    script = textwrap.dedent(
        f"""
        import asyncio
        from plait.engine.store.pool import open_pool
        from plait.server.queue import journal

        async def main():
            async with await open_pool({queue_database_url!r}) as pool:
                for n in range(25):
                    await journal.append(pool, {run_id!r}, "custom", {{"n": n}})
                await journal.append(pool, {run_id!r}, "end", None)

        asyncio.run(main())
        """
    )

    completed = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert completed.returncode == 0, completed.stderr
    events = await subscriber
    assert [e.seq for e in events] == list(range(1, 28))
    assert events[0] == _metadata(run_id)
    assert [e.data["n"] for e in events[1:-1]] == list(range(25))
    assert events[-1].event == "end"


async def test_nothing_is_lost_when_the_listen_connection_drops(
    qpool: Pool, qgraph: GraphVersion, listener: JournalListener
) -> None:
    run_id = await _run_id(qpool, qgraph)
    await journal.append(qpool, run_id, "values", {"n": 0})
    received: list[JournalEvent] = []
    first_seen = asyncio.Event()

    async def follow() -> None:
        async for event in listener.subscribe(run_id):
            received.append(event)
            first_seen.set()

    task = asyncio.create_task(follow())
    async with asyncio.timeout(WAIT_SECONDS):
        await first_seen.wait()
    async with qpool.connection() as conn:
        await conn.execute("SELECT pg_terminate_backend(%s)", (listener.backend_pid,))
    # Appended while the listener is down or reconnecting: notifications may be lost.
    await journal.append_many(qpool, run_id, [("values", {"n": n}) for n in range(1, 10)])
    await journal.append(qpool, run_id, "end", None)

    async with asyncio.timeout(WAIT_SECONDS):
        await task
    # metadata, values 0..9, end: every one, once, in order.
    assert [e.seq for e in received] == list(range(1, 13))
    assert received[0] == _metadata(run_id)
    assert [e.data["n"] for e in received[1:-1]] == list(range(10))
    assert listener.connections >= 2


async def test_a_subscription_ends_when_its_run_is_rolled_back(
    qpool: Pool, qgraph: GraphVersion, listener: JournalListener
) -> None:
    thread = await create_thread(qpool, thread_id=unique("t"))
    first, _ = await create_run(
        qpool, thread_id=thread["thread_id"], graph=qgraph, kwargs={}, metadata={}
    )
    received: list[JournalEvent] = []
    subscribed = asyncio.Event()

    async def follow() -> None:
        async for event in listener.subscribe(first.run_id):
            received.append(event)
            subscribed.set()

    task = asyncio.create_task(follow())
    async with asyncio.timeout(WAIT_SECONDS):
        await subscribed.wait()
    await create_run(
        qpool,
        thread_id=thread["thread_id"],
        graph=qgraph,
        kwargs={},
        metadata={},
        multitask_strategy="rollback",
    )

    async with asyncio.timeout(WAIT_SECONDS):
        await task
    # Only the metadata event create_run journaled, and no end: the run is gone.
    assert received == [_metadata(first.run_id)]


async def test_a_finished_run_without_end_ends_its_subscription(
    qpool: Pool, qgraph: GraphVersion, listener: JournalListener
) -> None:
    run_id = await _run_id(qpool, qgraph)
    await journal.append(qpool, run_id, "values", {})
    async with qpool.connection() as conn:
        await conn.execute("UPDATE plait_runs SET status = 'error' WHERE run_id = %s", (run_id,))

    events = await _collect(listener, run_id)

    assert [e.event for e in events] == ["metadata", "values"]


async def test_stop_is_idempotent(qpool: Pool) -> None:
    listening = JournalListener(qpool)
    async with asyncio.timeout(WAIT_SECONDS):
        await listening.start()
    assert listening.backend_pid is not None
    await listening.stop()
    await listening.stop()
    assert listening.connections == 1
