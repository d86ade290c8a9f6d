"""Steps of many runs stored by one statement: group commit for checkpoints.

A worker executes many runs at once, and each saves every step before it
goes on (``durability="sync"``). A statement per step costs a round trip, a
parse, a commit and a flush of the write-ahead log per step. The runs of a
worker share a :class:`StepCommitter`: a step goes at once when none is being
stored, and the steps that arrive while a statement is in flight go together
in the next one (group commit; no linger, so a lone run waits for nothing).
Each run waits for the commit of the statement that stores its step, so the
guarantee is ``sync``'s: nothing a finished step did is lost in a crash.

A guard (:class:`~plait.engine.store.step_writes.BatchGuard`, a worker's
lease of each run) lets each step through or not on its own: a refused step
stores nothing, its caller gets :class:`StepRefused`, and the other steps of
the statement are stored. A statement that fails for another reason is sent
again one step at a time, so one run's bad step fails only that run.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from psycopg.rows import tuple_row

from plait.engine.store.pool import Pool
from plait.engine.store.step_writes import BatchGuard, StepWrites, Ticket, statement

#: At most this many parameters in one statement (PostgreSQL takes 65,535).
MAX_PARAMS = 30_000


class StepRefused(Exception):
    """The guard refused a step: nothing of it was stored."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the step of {key} was refused by its guard")
        self.key = key


@dataclass
class _Pending:
    ticket: Ticket
    step: StepWrites
    done: asyncio.Future[None]

    @property
    def key(self) -> str:
        return str(self.ticket[0])


class StepCommitter:
    """Stores the steps its callers hand it, those that wait meanwhile together.

    ``guard`` decides, step by step, which are stored (none: all are). One
    statement is in flight at a time, on a connection of ``pool``. Two steps
    of one key never go in one statement: a key's steps are stored in the
    order they came.
    """

    def __init__(self, pool: Pool, guard: BatchGuard | None = None) -> None:
        self.pool = pool
        self.guard = guard
        self._queue: deque[_Pending] = deque()
        self._writer: asyncio.Task[None] | None = None

    async def store(self, ticket: Ticket, step: StepWrites) -> None:
        """Store ``step`` under ``ticket`` (its key, then the guard's values); return once
        committed. :class:`StepRefused` when the guard refused it.

        A caller cancelled meanwhile does not take the step back: once handed
        over, it is stored (a finished step must not be lost).
        """
        done = asyncio.get_running_loop().create_future()
        # Retrieved even when the caller is gone (no "never retrieved" warning).
        done.add_done_callback(lambda future: future.cancelled() or future.exception())
        self._queue.append(_Pending(ticket, step, done))
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_all())
        await asyncio.shield(done)

    async def _write_all(self) -> None:
        batch: list[_Pending] = []
        try:
            while self._queue:
                batch = self._take()
                await self._write(batch)
        finally:
            self._writer = None
            # Only a cancelled writer (the loop is closing) leaves steps behind.
            for pending in [*batch, *self._queue]:
                if not pending.done.done():
                    pending.done.set_exception(RuntimeError("the step committer was stopped"))
            self._queue.clear()

    def _take(self) -> list[_Pending]:
        """The next statement's steps: in order, one per key, up to :data:`MAX_PARAMS`."""
        taken: list[_Pending] = []
        keys: set[str] = set()
        params = 0
        rest: deque[_Pending] = deque()
        for pending in self._queue:
            size = pending.step.size() + len(pending.ticket)
            if pending.key in keys or (taken and params + size > MAX_PARAMS):
                rest.append(pending)
                continue
            taken.append(pending)
            keys.add(pending.key)
            params += size
        self._queue = rest
        return taken

    async def _write(self, batch: list[_Pending]) -> None:
        try:
            stored = await self._send(batch)
        except Exception as exc:
            if len(batch) == 1:
                _settle(batch[0], exc)
                return
            for pending in batch:
                await self._write([pending])
            return
        for pending in batch:
            _settle(pending, None if pending.key in stored else StepRefused(pending.key))

    async def _send(self, batch: list[_Pending]) -> set[str]:
        """Store ``batch`` in one statement; the keys of the steps stored."""
        query, params = statement([(pending.ticket, pending.step) for pending in batch], self.guard)
        async with (
            self.pool.connection() as conn,
            conn.cursor(binary=True, row_factory=tuple_row) as cursor,
        ):
            # A lone step's few shapes are prepared once per connection; a batch's
            # shape (how many steps, rows of each kind) seldom comes again.
            await cursor.execute(query, params, prepare=None if len(batch) == 1 else False)
            return {str(row[0]) for row in await cursor.fetchall()}


def _settle(pending: _Pending, error: BaseException | None) -> None:
    if pending.done.done():
        return
    if error is None:
        pending.done.set_result(None)
    else:
        pending.done.set_exception(error)
