"""Each run's events in order (table ``plait_run_events``), announced with LISTEN/NOTIFY.

A writer appends an event with the run's next ``seq`` (a counter on the run's
row, bumped under its row lock, so concurrent appenders of one run never
share a seq, and a reclaimed run's new worker continues it) and NOTIFYs
``plait_run_events`` with the run id; Postgres delivers the notification
when the transaction commits, so a reader never hears of an event it cannot
read yet.

Readers in a process share one :class:`JournalListener`: one LISTEN
connection that wakes the subscribers of a run. A subscriber always re-reads
the table after its last seq, so a notification is only a hint: missed ones
(reconnects, or a notification queue that overflowed) lose nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from engine.store.pool import Pool

#: Channel of event notifications; the payload is the run id.
EVENTS_CHANNEL = "plait_run_events"
#: The last event of every run.
END = "end"

_TERMINAL = ("error", "success", "timeout", "interrupted")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JournalEvent:
    """One event of a run: ``seq`` counts from 1 per run (the SSE ``id``)."""

    run_id: str
    seq: int
    event: str
    data: Any


class RunGone(LookupError):
    """Appending to a run that does not exist (deleted, e.g. rolled back)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id} does not exist")


async def append(
    target: Pool | AsyncConnection[DictRow], run_id: str, event: str, data: Any
) -> int:
    """Append one event to the run's journal; return its seq.

    ``target`` is a pool, or a connection (inside the caller's transaction:
    the event and its NOTIFY commit with it). Raises :class:`RunGone`.
    """
    seqs = await append_many(target, run_id, [(event, data)])
    return seqs[0]


async def append_many(
    target: Pool | AsyncConnection[DictRow], run_id: str, events: Iterable[tuple[str, Any]]
) -> list[int]:
    """Append several events in one transaction (fewer round trips); return their seqs."""
    items = list(events)
    if not items:
        return []
    if isinstance(target, AsyncConnectionPool):
        async with target.connection() as conn:
            return await _append(conn, run_id, items)
    return await _append(target, run_id, items)


# One statement (so, on an autocommit connection, one round trip and one
# transaction): bump the run's counter under its row lock, insert the events
# under the seqs it reserved, and NOTIFY (delivered when the statement commits).
# No row when the run does not exist.
_APPEND = """
WITH bumped AS (
    UPDATE plait_runs SET event_seq = event_seq + %(count)s
    WHERE run_id = %(run_id)s
    RETURNING event_seq
), inserted AS (
    INSERT INTO plait_run_events (run_id, seq, event, data)
    SELECT %(run_id)s, bumped.event_seq - %(count)s + item.position, item.event, item.data
    FROM bumped, unnest(%(events)s::text[], %(data)s::jsonb[])
        WITH ORDINALITY AS item(event, data, position)
    RETURNING seq
)
SELECT (SELECT array_agg(seq ORDER BY seq) FROM inserted) AS seqs,
       pg_notify(%(channel)s, %(run_id)s)
FROM bumped
"""


async def _append(
    conn: AsyncConnection[DictRow], run_id: str, items: list[tuple[str, Any]]
) -> list[int]:
    cursor = await conn.execute(
        _APPEND,
        {
            "count": len(items),
            "run_id": run_id,
            "events": [event for event, _ in items],
            "data": [Jsonb(data) for _, data in items],
            "channel": EVENTS_CHANNEL,
        },
    )
    row = await cursor.fetchone()
    if row is None:
        raise RunGone(run_id)
    return list(row["seqs"])


async def read_after(
    pool: Pool, run_id: str, after: int = 0, limit: int = 1000
) -> list[JournalEvent]:
    """The run's events with ``seq > after``, in order, at most ``limit``."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT seq, event, data FROM plait_run_events WHERE run_id = %s AND seq > %s "
            "ORDER BY seq LIMIT %s",
            (run_id, after, limit),
        )
        rows = await cursor.fetchall()
    return [JournalEvent(run_id, row["seq"], row["event"], row["data"]) for row in rows]


class JournalListener:
    """One LISTEN connection per process, fanning out run events to subscribers.

    ``start()`` returns once it listens; it reconnects by itself after a
    lost connection (and then wakes every subscriber to re-read). As a last
    resort against anything missed, an idle subscriber also re-reads every
    ``poll_seconds``.
    """

    def __init__(
        self,
        pool: Pool,
        *,
        conninfo: str | None = None,
        poll_seconds: float = 5.0,
        page_size: int = 500,
        reconnect_seconds: float = 1.0,
    ) -> None:
        self._pool = pool
        if conninfo is None:
            if not isinstance(pool.conninfo, str):
                raise TypeError("pass conninfo: the pool's conninfo is not a string")
            conninfo = pool.conninfo
        self._conninfo = conninfo
        self._poll_seconds = poll_seconds
        self._page_size = page_size
        self._reconnect_seconds = reconnect_seconds
        self._wakers: dict[str, set[asyncio.Event]] = {}
        self._listening = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: Backend pid of the LISTEN connection (None while disconnected).
        self.backend_pid: int | None = None
        #: How many times the LISTEN connection was established.
        self.connections = 0

    async def start(self) -> None:
        """Connect and LISTEN; return once listening (wrap in ``asyncio.timeout`` to bound it)."""
        if self._task is None:
            self._task = asyncio.create_task(self._listen(), name="plait-journal-listener")
        await self._listening.wait()

    async def stop(self) -> None:
        """Close the LISTEN connection; subscribers fall back to polling."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def subscribe(self, run_id: str, after: int = 0) -> AsyncIterator[JournalEvent]:
        """Every event of ``run_id`` with seq > ``after``, in order, none twice.

        Ends after the ``end`` event, or when the run is deleted, or when it
        finished and no more events exist. It registers for wake-ups before
        its first read, so nothing appended meanwhile is missed. Close it
        (``aclose``, or ``contextlib.aclosing``) when leaving early.
        """
        waker = asyncio.Event()
        self._wakers.setdefault(run_id, set()).add(waker)
        last = after
        try:
            while True:
                # Cleared before reading: a notification during the read sets
                # it again, so the next wait returns at once.
                waker.clear()
                status, events = await self._read(run_id, last)
                for event in events:
                    last = event.seq
                    yield event
                    if event.event == END:
                        return
                if len(events) == self._page_size:
                    continue
                if status is None or status in _TERMINAL:
                    # Gone, or ended: read in the same snapshot as the status,
                    # these were its last events.
                    return
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._poll_seconds):
                        await waker.wait()
        finally:
            subscribers = self._wakers.get(run_id)
            if subscribers is not None:
                subscribers.discard(waker)
                if not subscribers:
                    del self._wakers[run_id]

    async def _read(self, run_id: str, after: int) -> tuple[str | None, list[JournalEvent]]:
        """The run's status (``None``: no such run) and a page of its events after ``after``.

        One statement, so one snapshot: when the status says the run ended,
        every event appended before it ended is in the page (or the next ones).
        """
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                """
                SELECT r.status, e.seq, e.event, e.data
                FROM plait_runs r
                LEFT JOIN LATERAL (
                    SELECT seq, event, data FROM plait_run_events
                    WHERE run_id = r.run_id AND seq > %s
                    ORDER BY seq LIMIT %s
                ) e ON true
                WHERE r.run_id = %s
                ORDER BY e.seq
                """,
                (after, self._page_size, run_id),
            )
            rows = await cursor.fetchall()
        if not rows:
            return None, []
        events = [
            JournalEvent(run_id, row["seq"], row["event"], row["data"])
            for row in rows
            if row["seq"] is not None
        ]
        return rows[0]["status"], events

    async def _listen(self) -> None:
        while True:
            try:
                async with await AsyncConnection.connect(self._conninfo, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {EVENTS_CHANNEL}")
                    self.backend_pid = conn.info.backend_pid
                    self.connections += 1
                    self._listening.set()
                    # Whatever was announced while we were not listening: re-read.
                    self._wake_all()
                    async for notification in conn.notifies():
                        for waker in self._wakers.get(notification.payload, ()):
                            waker.set()
            except Exception as exc:  # the connection dropped: reconnect
                log.warning("journal listener lost its connection (%s); reconnecting", exc)
            self._listening.clear()
            self.backend_pid = None
            await asyncio.sleep(self._reconnect_seconds)

    def _wake_all(self) -> None:
        for wakers in self._wakers.values():
            for waker in wakers:
                waker.set()
