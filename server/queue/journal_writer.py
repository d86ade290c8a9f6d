"""Append runs' events to their journals in order, batching what piles up meanwhile.

A run can emit hundreds of message chunks a second, and a worker executes
many runs at once; one transaction per event would make the database (and
the worker's own CPU) the bottleneck, while waiting long to fill a batch
would delay every event. A :class:`JournalCommitter` does neither: one
background task per worker writes whatever its runs emitted, of every run, in
one statement, and whatever is emitted while that write is in flight goes
into the next one (group commit). A round is written a short *linger* after
its first event, as Kafka's producers do: a run's next steps and other runs'
events join it, so a 10-node run costs a few appends instead of one per step.
The linger grows with the load: a round waits ``PLAIT_JOURNAL_LINGER_MS`` (5 ms
by default) for each run whose events it holds, up to
``PLAIT_JOURNAL_LINGER_MAX_MS`` (20 ms). One run alone has its events on its
stream within 5 ms; when many runs share the worker's CPU, each round's fixed
cost (a statement, a commit, a notification and a delivery per run) is paid
less often, and no event waits longer than the cap. A run that ends does not
linger: :meth:`JournalWriter.close` has its events written at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

import psycopg
from psycopg.rows import DictRow

from plait.engine.store import Pool
from plait.server.queue import journal

#: What a round reports: the runs whose events it could not write, and why.
Failures = dict[str, BaseException]

LINGER_ENV = "PLAIT_JOURNAL_LINGER_MS"
DEFAULT_LINGER_MS = 5.0
MOST_LINGER_ENV = "PLAIT_JOURNAL_LINGER_MAX_MS"
DEFAULT_MOST_LINGER_MS = 20.0


def linger_seconds() -> float:
    """How long a round waits for each run whose events it holds (``PLAIT_JOURNAL_LINGER_MS``)."""
    return _milliseconds(LINGER_ENV, DEFAULT_LINGER_MS) / 1000


def most_linger_seconds() -> float:
    """The longest a round waits, however many runs it holds (``PLAIT_JOURNAL_LINGER_MAX_MS``)."""
    return _milliseconds(MOST_LINGER_ENV, DEFAULT_MOST_LINGER_MS) / 1000


def round_linger(runs: int, linger: float, most: float) -> float:
    """How long a round holding events of ``runs`` runs waits after its first event.

    ``linger`` per run, never more than ``most`` (nor less than one run's ``linger``:
    a cap set below it is no cap).
    """
    return min(linger * runs, max(most, linger))


def _milliseconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        milliseconds = float(raw) if raw else default
    except ValueError:
        raise ValueError(f"{name} must be a number of milliseconds, not {raw!r}") from None
    if milliseconds < 0:
        raise ValueError(f"{name} must be 0 or more, not {raw!r}")
    return milliseconds


class JournalCommitter:
    """Writes the events its runs emit, each run's in order, a round at a time.

    Use as an async context manager, or call :meth:`start` and :meth:`close`.
    A round is written :func:`round_linger` after its first event, unless
    hurried: ``linger`` for each run it holds (seconds; default
    :func:`linger_seconds`), at most ``most`` (default :func:`most_linger_seconds`).
    """

    def __init__(
        self,
        pool: Pool,
        *,
        owner: str | None = None,
        linger: float | None = None,
        most: float | None = None,
    ) -> None:
        self.pool = pool
        self.linger = linger_seconds() if linger is None else linger
        self.most = most_linger_seconds() if most is None else most
        # A pool connection held for its rounds (one at a time needs one): see _connection.
        self._conn: psycopg.AsyncConnection[DictRow] | None = None
        # A worker's id: its events are written only while it holds their run's lease.
        self.owner = owner
        self._pending: dict[str, list[tuple[str, Any]]] = {}
        # The attempt each pending run's events belong to (its lease, with ``owner``).
        self._attempts: dict[str, int] = {}
        self._round: asyncio.Future[Failures] | None = None
        # When the pending round's first event came (loop time): its linger ends after it.
        self._round_since = 0.0
        self._wake = asyncio.Event()
        # Set when a writer waits for its events (a run ends): the round lingers no more.
        self._hurry = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> JournalCommitter:
        self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def start(self) -> None:
        """Start the background writer."""
        self._closing = False
        self._task = asyncio.create_task(self._write_loop(), name="journal committer")

    def emit(
        self, run_id: str, event: str, data: Any, attempt: int | None = None
    ) -> asyncio.Future[Failures]:
        """Queue an event of ``run_id`` (emitted by its ``attempt``: written only while the
        owner holds that attempt's lease); the future resolves when its round is written."""
        if self._task is None or self._task.done():
            raise RuntimeError("the journal committer is not running")
        self._pending.setdefault(run_id, []).append((event, data))
        if attempt is not None:
            self._attempts[run_id] = attempt
        if self._round is None:
            loop = asyncio.get_running_loop()
            self._round = loop.create_future()
            self._round_since = loop.time()
        self._wake.set()
        return self._round

    def take(self, run_id: str) -> tuple[list[tuple[str, Any]], asyncio.Future[Failures] | None]:
        """Remove ``run_id``'s events from the round not sent yet; return them and that round."""
        self._attempts.pop(run_id, None)
        return self._pending.pop(run_id, []), self._round

    def hurry(self) -> None:
        """Write the pending round now, without waiting out its linger."""
        self._hurry.set()

    async def close(self) -> None:
        """Write what is queued and stop."""
        self._closing = True
        self._hurry.set()
        self._wake.set()
        if self._task is not None:
            task, self._task = self._task, None
            await task

    async def _write_loop(self) -> None:
        done: asyncio.Future[Failures] | None = None
        try:
            while True:
                await self._wake.wait()
                await self._linger()
                self._wake.clear()
                batches, self._pending = self._pending, {}
                attempts, self._attempts = self._attempts, {}
                done, self._round = self._round, None
                if done is not None and not batches:
                    done.set_result({})  # its events were taken (JournalWriter.drain)
                elif done is not None:
                    try:
                        failures = await self._write(batches, attempts)
                    except Exception as exc:
                        _fail(done, exc)
                    else:
                        done.set_result(failures)
                if self._closing and not self._pending:
                    return
        finally:
            # Cancelled (the process is going away): no writer may wait forever.
            for pending in (done, self._round):
                if pending is not None and not pending.done():
                    _fail(pending, RuntimeError("the journal committer stopped"))
            await self._release()

    async def _linger(self) -> None:
        """Wait until the round's linger is over, or until someone hurries it.

        Runs that join the round while it waits lengthen its linger: when the
        wait ends, it goes on for what they added.
        """
        loop = asyncio.get_running_loop()
        while not self._hurry.is_set():
            linger = round_linger(len(self._pending), self.linger, self.most)
            remaining = self._round_since + linger - loop.time()
            if remaining <= 0:
                break
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._hurry.wait()
        self._hurry.clear()

    async def _connection(self) -> psycopg.AsyncConnection[DictRow]:
        """The writer's connection: taken from the pool once, and again when it breaks.

        The append statement always has the same shape, yet Postgres would plan it
        again on every round (its estimate prefers a custom plan for each array of
        runs): on this connection it is planned once (``force_generic_plan``). Taken
        from the pool, not opened beside it: at the server's connection limit the
        pool waits for a connection where a new one would be refused.
        """
        if self._conn is not None and (self._conn.closed or self._conn.broken):
            await self._release()
        if self._conn is None:
            conn = await self.pool.getconn()
            try:
                await conn.execute("SET plan_cache_mode = force_generic_plan")
            except BaseException:
                await self.pool.putconn(conn)
                raise
            self._conn = conn
        return self._conn

    async def _release(self) -> None:
        """Give the connection back without its setting, which must not reach other pool
        users; a connection that cannot take it back is closed, and the pool replaces it."""
        if self._conn is not None:
            conn, self._conn = self._conn, None
            if not (conn.closed or conn.broken):
                try:
                    await conn.execute("RESET plan_cache_mode")
                except psycopg.Error:
                    await conn.close()
            await self.pool.putconn(conn)

    async def _append(
        self, batches: dict[str, list[tuple[str, Any]]], attempts: dict[str, int]
    ) -> dict[str, int]:
        # A broken connection fails this round; the next round takes a new one.
        return await journal.append_runs(
            await self._connection(), batches, owner=self.owner, attempts=attempts
        )

    async def _write(
        self, batches: dict[str, list[tuple[str, Any]]], attempts: dict[str, int]
    ) -> Failures:
        """Write one round; a run whose events fail (or is gone) does not fail the others."""
        try:
            written = await self._append(batches, attempts)
        except psycopg.Error:
            if len(batches) == 1:
                raise
            # Find out whose events the database refuses, writing each run alone.
            written, failures = {}, {}
            for run_id, items in batches.items():
                try:
                    written |= await self._append({run_id: items}, attempts)
                except psycopg.Error as exc:
                    failures[run_id] = exc
            return failures | {
                run_id: journal.RunGone(run_id)
                for run_id in batches
                if run_id not in written and run_id not in failures
            }
        return {run_id: journal.RunGone(run_id) for run_id in batches if run_id not in written}


def _fail(written: asyncio.Future[Failures], exc: BaseException) -> None:
    written.set_exception(exc)
    # Every writer in the round checks its futures itself: no "exception never
    # retrieved" warning for a round whose writers look later or not at all.
    written.exception()


class JournalWriter:
    """One run's events, in order, through the worker's shared :class:`JournalCommitter`.

    ``attempt`` is the attempt that emits them: with a committer that has an
    owner, they are written only while that attempt's lease is held.
    """

    def __init__(
        self, run_id: str, committer: JournalCommitter, attempt: int | None = None
    ) -> None:
        self.run_id = run_id
        self.attempt = attempt
        self._committer = committer
        # Rounds holding this run's events that were not checked yet, oldest first.
        self._rounds: list[asyncio.Future[Failures]] = []
        self._closing = False

    def emit(self, event: str, data: Any) -> None:
        """Queue ``event`` (JSON-like ``data``); it is written after every earlier one."""
        if self._closing:
            raise RuntimeError(f"the journal writer of run {self.run_id} is closed")
        # Surface a failed write to the run instead of silently dropping events.
        while self._rounds and self._rounds[0].done():
            self._check(self._rounds.pop(0))
        written = self._committer.emit(self.run_id, event, data, self.attempt)
        if not self._rounds or self._rounds[-1] is not written:
            self._rounds.append(written)

    async def close(self) -> None:
        """Wait until what was emitted is written; raises the error of a failed write."""
        if self._closing:
            return
        self._closing = True
        if self._rounds:
            self._committer.hurry()
        while self._rounds:
            self._check(await asyncio.shield(self._rounds.pop(0)))

    async def drain(self) -> list[tuple[str, Any]]:
        """Close, and return the events not sent yet instead of writing them.

        The rounds already on their way are waited for (their events come
        first); what is returned is for the caller to write in its own
        transaction (a finishing run's ``runs.finish_run(events=...)``): the
        run's last steps and its ``end`` then cost one commit, not two.
        """
        if self._closing:
            return []
        self._closing = True
        unsent, collecting = self._committer.take(self.run_id)
        if unsent:
            # That round holds nothing of this run any more: not waited for.
            self._rounds = [written for written in self._rounds if written is not collecting]
        while self._rounds:
            self._check(await asyncio.shield(self._rounds.pop(0)))
        return unsent

    def _check(self, written: asyncio.Future[Failures] | Failures) -> None:
        failures = written.result() if isinstance(written, asyncio.Future) else written
        failure = failures.get(self.run_id)
        if failure is not None:
            raise failure
