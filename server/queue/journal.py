"""Each run's events in order (table ``plait_run_events``), announced with LISTEN/NOTIFY.

A writer appends events with the run's next ``seq`` (a counter on the run's
row, bumped under its row lock, so concurrent appenders of one run never
share a seq, and a reclaimed run's new worker continues it) and NOTIFYs
``plait_run_events``; Postgres delivers the notification when the
transaction commits, so a reader never hears of an event it cannot read yet.

The notification carries the events themselves (``<run_id> <first seq>
<JSON [[event, data], ...]>``) when they fit in Postgres's 8000-byte payload,
otherwise just ``<run_id>``. Readers in a process share one
:class:`JournalListener`: one LISTEN connection that hands a run's events to
its subscribers, which then need no query. A notification is still only a
hint: a subscriber re-reads the table after its last seq whenever a batch
does not follow on from what it has (a missed or oversized notification,
a reconnect), so nothing is lost or repeated. A new subscriber reads the table
first, unless it followed the run from before the run was committed
(:meth:`JournalListener.follow`): then every event was notified to it. A
worker in the listener's own process also hands it the events it commits with a
run's end (:meth:`JournalListener.committed`): its streams need not wait for the
notification, which repeats them.

A new run also announces its thread on the channel (``thread:<digest of its id>``,
:func:`thread_hint`): a stream that follows a thread from run to run waits for
it (:meth:`JournalListener.new_runs`) instead of asking for the next run.
Other changes a process keeps reads of are announced on it too, by a payload of
their own (``catalog``: :mod:`plait.server.graphs.catalog`, :meth:`JournalListener.watch`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections import deque
from collections.abc import (
    AsyncGenerator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from typing import Any

import orjson
from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg_pool import AsyncConnectionPool

from plait.engine.store import Pool, dumps_json

#: Channel of event notifications (payload: see the module docstring).
EVENTS_CHANNEL = "plait_run_events"
#: The last event of every run.
END = "end"
#: Postgres refuses NOTIFY payloads of 8000 bytes or more; leave room for the seq.
NOTIFY_LIMIT = 7900
#: Start of the payload that announces a thread's new run (a run id never starts so).
THREAD_HINT = "thread:"

_TERMINAL = ("error", "success", "timeout", "interrupted")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JournalEvent:
    """One event of a run: ``seq`` counts from 1 per run (the SSE ``id``)."""

    run_id: str
    seq: int
    event: str
    data: Any
    #: An ``error`` or ``end`` a requeue continued past (never streamed; see
    #: :func:`plait.server.queue.runs.requeue_run`).
    superseded: bool = False


class RunGone(LookupError):
    """Appending to a run that does not exist (deleted, e.g. rolled back), or, for a
    worker's appends, a run that worker no longer executes (its lease went to another)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id} does not exist or is no longer executed here")


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
    first = await append_runs(target, {run_id: items})
    if run_id not in first:
        raise RunGone(run_id)
    return list(range(first[run_id], first[run_id] + len(items)))


# One statement (so, on an autocommit connection, one round trip and one
# transaction) for the events of several runs: bump each run's counter under
# its row lock, insert its events under the seqs it reserved, and NOTIFY each
# run once (delivered when the statement commits). Runs that do not exist get
# no row. Each run's events arrive as one JSON array of [event, data] pairs,
# encoded once in Python and reused for the notification's payload. The arrays
# go in binary (``%(name)b``): in text, psycopg escapes every quote of every
# JSON string with a regex, which cost more CPU than the rest of an append.
_APPEND = """
WITH request AS (
    SELECT * FROM unnest(
        %(run_ids)b::text[], %(batches)b::json[], %(payloads)b::text[], %(attempts)b::int[]
    ) AS request(run_id, batch, payload, attempt)
), locked AS (
    -- Row locks in run_id order, as the heartbeat takes them: two statements
    -- over the same runs in different orders would deadlock. A worker's events
    -- are written only while it holds the run's lease for the attempt that
    -- emitted them, so a worker that lost a run (its lease expired and another
    -- claim took it over) cannot add events to the new attempt's stream or
    -- after its `end` (server/queue/leases.py).
    SELECT r.run_id FROM plait_runs r JOIN request USING (run_id)
    WHERE %(owner)s::text IS NULL
       OR (r.lease_owner = %(owner)s AND r.status = 'running'
           AND (request.attempt IS NULL OR r.attempt = request.attempt))
    ORDER BY r.run_id
    FOR NO KEY UPDATE OF r
), bumped AS (
    UPDATE plait_runs r SET event_seq = r.event_seq + json_array_length(request.batch)
    FROM locked JOIN request USING (run_id)
    WHERE r.run_id = locked.run_id
    RETURNING r.run_id, r.event_seq - json_array_length(request.batch) AS base,
              request.batch, request.payload
), inserted AS (
    INSERT INTO plait_run_events (run_id, seq, event, data)
    SELECT bumped.run_id, bumped.base + item.position, item.pair->>0, item.pair->1
    FROM bumped, json_array_elements(bumped.batch) WITH ORDINALITY AS item(pair, position)
)
SELECT bumped.run_id, bumped.base + 1 AS first_seq,
       pg_notify(%(channel)s, CASE WHEN bumped.payload IS NULL THEN bumped.run_id
                 ELSE bumped.run_id || ' ' || (bumped.base + 1) || ' ' || bumped.payload END)
FROM bumped
"""


def encode_batch(items: Sequence[tuple[str, Any]]) -> bytes:
    """A batch of events as the JSON array ``[[event, data], ...]``."""
    return dumps_json([[event, data] for event, data in items])


async def append_runs(
    target: Pool | AsyncConnection[DictRow],
    batches: dict[str, list[tuple[str, Any]]],
    *,
    owner: str | None = None,
    attempts: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """Append each run's events in one statement; return each existing run's first new seq.

    Runs missing from the result do not exist (their events were not written);
    with ``owner`` (a worker id), neither do runs that worker does not hold
    under a lease while they run, for the run's attempt in ``attempts`` when
    it is there.
    """
    if isinstance(target, AsyncConnectionPool):
        async with target.connection() as conn:
            return await append_runs(conn, batches, owner=owner, attempts=attempts)
    run_ids = [run_id for run_id, items in batches.items() if items]
    encoded = [encode_batch(batches[run_id]) for run_id in run_ids]
    cursor = await target.execute(
        _APPEND,
        {
            "run_ids": run_ids,
            "batches": [text.decode() for text in encoded],
            # Too big for a notification: subscribers re-read.
            "payloads": [
                text.decode() if len(text) + len(run_id) < NOTIFY_LIMIT else None
                for run_id, text in zip(run_ids, encoded, strict=True)
            ],
            "attempts": [(attempts or {}).get(run_id) for run_id in run_ids],
            "channel": EVENTS_CHANNEL,
            "owner": owner,
        },
    )
    return {row["run_id"]: row["first_seq"] for row in await cursor.fetchall()}


async def resume_point(pool: Pool, run_id: str, after: int) -> int:
    """Where a stream rejoined with ``Last-Event-ID: after`` starts (the seq it reads after).

    An id past the run's journal (another server's, or a client's guess) would
    wait for events that never come: a finished run answers its ``end`` again,
    a live one streams what comes next. Status and seq are read together, so
    a run that ends meanwhile is seen ended or its ``end`` is still ahead.
    """
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT status, event_seq FROM plait_runs WHERE run_id = %s", (run_id,)
        )
        row = await cursor.fetchone()
    if row is None:
        return after
    last: int = row["event_seq"]
    if row["status"] in _TERMINAL:
        return min(after, last - 1)  # `end` is a finished run's last event
    return min(after, last)


async def read_after(
    pool: Pool, run_id: str, after: int = 0, limit: int = 1000
) -> list[JournalEvent]:
    """The run's events with ``seq > after``, in order, at most ``limit`` (superseded ones too)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT seq, event, data, superseded FROM plait_run_events "
            "WHERE run_id = %s AND seq > %s ORDER BY seq LIMIT %s",
            (run_id, after, limit),
        )
        rows = await cursor.fetchall()
    return [
        JournalEvent(run_id, row["seq"], row["event"], row["data"], row["superseded"])
        for row in rows
    ]


@dataclass(eq=False)
class _Subscription:
    """What the listener hands one subscriber: event batches, or a hint to re-read."""

    wake: asyncio.Event = field(default_factory=asyncio.Event)
    #: ``(first seq, [(event, data), ...])`` in the order notified.
    batches: deque[tuple[int, list[Any]]] = field(default_factory=deque)
    reread: bool = False

    def hint(self) -> None:
        self.batches.clear()
        self.reread = True
        self.wake.set()

    def deliver(self, first: int, events: list[Any], limit: int) -> None:
        if len(self.batches) >= limit:
            # A slow reader: stop buffering, it catches up from the table.
            self.hint()
            return
        self.batches.append((first, events))
        self.wake.set()


def thread_hint(thread_id: str) -> str:
    """The payload on :data:`EVENTS_CHANNEL` that announces a new run of ``thread_id``: a
    digest of the id, which may be longer than a notification can carry (a client names
    its threads)."""
    return THREAD_HINT + hashlib.blake2b(thread_id.encode(), digest_size=16).hexdigest()


class NewRuns:
    """Wake-ups for one thread's new runs (:meth:`JournalListener.new_runs`)."""

    def __init__(self, listener: JournalListener, sub: _Subscription) -> None:
        self._listener = listener
        self._sub = sub
        self._idle = listener._poll_seconds

    async def wait(self) -> None:
        """Return once the thread may have a new run: one was announced since the last
        call (or before the first), or the listener reconnected, or an idle re-read is
        due (as :meth:`JournalListener.subscribe_batches`' are). Then read the thread."""
        sub = self._sub
        if not sub.reread:
            try:
                async with asyncio.timeout(self._idle):
                    await sub.wake.wait()
                self._idle = self._listener._poll_seconds
            except TimeoutError:
                self._idle = self._listener._next_idle(self._idle)
        # Cleared before the caller reads: an announcement during the read sets it again.
        sub.reread = False
        sub.wake.clear()


def _through_end(events: list[JournalEvent]) -> list[JournalEvent]:
    """``events`` up to and including ``end`` (nothing follows it)."""
    for index, event in enumerate(events):
        if event.event == END:
            return events[: index + 1]
    return events


async def one_by_one(
    batches: AsyncGenerator[list[JournalEvent], None],
) -> AsyncGenerator[JournalEvent, None]:
    """The events of ``batches`` one at a time; closing this closes them."""
    async with contextlib.aclosing(batches):
        async for batch in batches:
            for event in batch:
                yield event


class Followed:
    """A run followed since before it was created (:meth:`JournalListener.follow`)."""

    def __init__(self, listener: JournalListener, run_id: str, sub: _Subscription) -> None:
        self.run_id = run_id
        self._listener = listener
        self._sub = sub

    def batches(self, after: int = 0) -> AsyncGenerator[list[JournalEvent], None]:
        """The run's events after seq ``after``, as :meth:`JournalListener.subscribe_batches`
        gives them; closing the generator closes this."""
        return self._listener._batches(self.run_id, after, self._sub)

    def close(self) -> None:
        """Stop following (again: nothing)."""
        self._listener._unsubscribe(self.run_id, self._sub)


class JournalListener:
    """One LISTEN connection per process, fanning out run events to subscribers.

    ``start()`` returns once it listens; it reconnects by itself after a
    lost connection (and then wakes every subscriber to re-read). As a last
    resort against anything missed, an idle subscriber also re-reads after
    ``poll_seconds``; while the LISTEN connection stays up (so nothing can
    have been missed) each further idle re-read waits twice as long, up to
    ``max_poll_seconds``: a thousand streams of runs queued for a minute
    would otherwise read the table 200 times a second.
    """

    def __init__(
        self,
        pool: Pool,
        *,
        conninfo: str | None = None,
        poll_seconds: float = 5.0,
        max_poll_seconds: float = 60.0,
        page_size: int = 500,
        reconnect_seconds: float = 1.0,
        buffered_batches: int = 1000,
    ) -> None:
        self._pool = pool
        if conninfo is None:
            if not isinstance(pool.conninfo, str):
                raise TypeError("pass conninfo: the pool's conninfo is not a string")
            conninfo = pool.conninfo
        self._conninfo = conninfo
        self._poll_seconds = poll_seconds
        self._max_poll_seconds = max(poll_seconds, max_poll_seconds)
        self._page_size = page_size
        self._reconnect_seconds = reconnect_seconds
        self._buffered_batches = buffered_batches
        self._wakers: dict[str, set[_Subscription]] = {}
        self._watchers: dict[str, list[Callable[[bool], None]]] = {}
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
            if self._listening.is_set():
                self._not_listening()

    def watch(self, payload: str, changed: Callable[[bool], None]) -> None:
        """Call ``changed(True)`` on each notification of exactly ``payload``, and whenever
        one may have been missed: ``changed(False)`` when the connection is lost,
        ``changed(True)`` once it listens again (and now, if it listens already)."""
        self._watchers.setdefault(payload, []).append(changed)
        if self._listening.is_set():
            changed(True)

    @contextlib.contextmanager
    def new_runs(self, thread_id: str) -> Iterator[NewRuns]:
        """Wake-ups for ``thread_id``'s new runs while the block lasts (:class:`NewRuns`).

        Enter it before reading the thread's runs: a run created during the read
        then wakes the first :meth:`NewRuns.wait`, so none is missed.
        """
        key = thread_hint(thread_id)
        sub = _Subscription()
        self._wakers.setdefault(key, set()).add(sub)
        try:
            yield NewRuns(self, sub)
        finally:
            self._unsubscribe(key, sub)

    def subscribe(self, run_id: str, after: int = 0) -> AsyncGenerator[JournalEvent, None]:
        """Every event of ``run_id`` with seq > ``after``, in order, none twice.

        Ends after the ``end`` event, or when the run is deleted, or when it
        finished and no more events exist. It registers for notifications
        before its first read, so nothing appended meanwhile is missed. Close
        it (``aclose``, or ``contextlib.aclosing``) when leaving early.
        """
        return one_by_one(self.subscribe_batches(run_id, after))

    def follow(self, run_id: str) -> Followed:
        """Follow ``run_id`` from now on: call it before the run is created.

        Every event committed after this call is notified, and is handed to the
        returned :class:`Followed` while the listener listens (a reconnect meanwhile
        makes it read the table), so its :meth:`Followed.batches` start without the
        read :meth:`subscribe_batches` makes first. Close it if it is not read.
        """
        sub = _Subscription(reread=not self._listening.is_set())
        self._wakers.setdefault(run_id, set()).add(sub)
        return Followed(self, run_id, sub)

    def subscribe_batches(
        self, run_id: str, after: int = 0
    ) -> AsyncGenerator[list[JournalEvent], None]:
        """:meth:`subscribe`, a list at a time: every event available without waiting.

        A reader that writes events out (SSE) sends each list at once.
        """
        return self._batches(run_id, after)

    async def _batches(
        self, run_id: str, after: int, sub: _Subscription | None = None
    ) -> AsyncGenerator[list[JournalEvent], None]:
        """The batches of ``run_id`` after seq ``after``: through ``sub`` when it follows the
        run already, else through a subscription registered before a first read."""
        if sub is None:
            sub = _Subscription(reread=True)
            self._wakers.setdefault(run_id, set()).add(sub)
        last = after
        idle = self._poll_seconds
        try:
            while True:
                if sub.reread:
                    sub.reread = False
                    status, events = await self._read(run_id, last)
                    ready = _through_end(events)
                    if ready:
                        last = ready[-1].seq
                        yield ready
                        if ready[-1].event == END:
                            return
                    if len(events) == self._page_size:
                        sub.reread = True
                        continue
                    if status is None or status in _TERMINAL:
                        # Gone, or ended: read in the same snapshot as the status,
                        # these were its last events.
                        return
                ready = []
                while sub.batches and not sub.reread:
                    first, pairs = sub.batches.popleft()
                    if first > last + 1:
                        # Something between was not delivered to us: read it.
                        sub.reread = True
                        break
                    # Skip what was already read from the table: the rest follows on.
                    for name, data in pairs[last + 1 - first :]:
                        last += 1
                        ready.append(JournalEvent(run_id, last, name, data))
                        if name == END:
                            break
                    if ready and ready[-1].event == END:
                        break
                if ready:
                    yield ready
                    if ready[-1].event == END:
                        return
                if sub.reread or sub.batches:
                    continue
                # Nothing is awaited between the checks above and clearing: a
                # notification arriving later sets it again.
                sub.wake.clear()
                try:
                    async with asyncio.timeout(idle):
                        await sub.wake.wait()
                    idle = self._poll_seconds
                except TimeoutError:
                    sub.reread = True
                    idle = self._next_idle(idle)
        finally:
            self._unsubscribe(run_id, sub)

    def _next_idle(self, idle: float) -> float:
        """The wait before the next idle re-read: doubled while the LISTEN connection is up
        (nothing can have been missed), else ``poll_seconds``."""
        if self._listening.is_set():
            return min(2 * idle, self._max_poll_seconds)
        return self._poll_seconds

    def _unsubscribe(self, key: str, sub: _Subscription) -> None:
        subscribers = self._wakers.get(key)
        if subscribers is not None:
            subscribers.discard(sub)
            if not subscribers:
                del self._wakers[key]

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
                    WHERE run_id = r.run_id AND seq > %s AND NOT superseded
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
                    self._tell_watchers(listening=True)
                    async for notification in conn.notifies():
                        self._dispatch(notification.payload)
            except Exception as exc:  # the connection dropped: reconnect
                log.warning("journal listener lost its connection (%s); reconnecting", exc)
            self._not_listening()
            await asyncio.sleep(self._reconnect_seconds)

    def _dispatch(self, payload: str) -> None:
        """Hand a notification's events to the run's subscribers (or tell them to re-read);
        wake those waiting for a thread's new run; tell a payload's watchers."""
        watchers = self._watchers.get(payload)
        if watchers:
            for changed in watchers:
                changed(True)
            return
        if payload.startswith(THREAD_HINT):
            for sub in self._wakers.get(payload, ()):
                sub.hint()
            return
        run_id, _, rest = payload.partition(" ")
        subscribers = self._wakers.get(run_id)
        if not subscribers:
            return  # parsed only when someone follows the run
        first, _, batch = rest.partition(" ")
        try:
            seq, pairs = int(first), orjson.loads(batch)
        except ValueError:  # just a run id (a hint), or not ours to parse
            for sub in subscribers:
                sub.hint()
            return
        for sub in subscribers:
            sub.deliver(seq, pairs, self._buffered_batches)

    def committed(self, run_id: str, first: int, batch: str) -> None:
        """Hand ``run_id``'s events this process has just committed (``batch``: their JSON
        list of ``[event, data]``, from seq ``first``) to the run's subscribers, as their
        notification will: a stream of a run this process executes need not wait for
        it. The notification repeats them, and a subscriber skips what it has."""
        subscribers = self._wakers.get(run_id)
        if subscribers:
            pairs = orjson.loads(batch)
            for sub in subscribers:
                sub.deliver(first, pairs, self._buffered_batches)

    def _not_listening(self) -> None:
        """The connection is lost or closed: subscribers poll, watchers are told."""
        self._listening.clear()
        self.backend_pid = None
        self._tell_watchers(listening=False)

    def _tell_watchers(self, *, listening: bool) -> None:
        for watchers in self._watchers.values():
            for changed in watchers:
                changed(listening)

    def _wake_all(self) -> None:
        for subscribers in self._wakers.values():
            for sub in subscribers:
                sub.hint()
