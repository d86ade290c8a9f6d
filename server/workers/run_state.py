"""Keep a running run's Plait state in Postgres while its worker executes it.

The executor feeds every stream item to :class:`LiveState`; when the run's
marks (:class:`plait.engine.run.marks.RunMarks`) change what it is (a call
backs off to retry, a map lost items), one task writes the newest state and
detail under the run's lease (:func:`plait.server.queue.runs.set_state`),
coalescing what changes meanwhile, and writes ``running`` again when the
back-off is over. Marks come only from retries and lost map items, so a run
without them costs no write at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from plait.engine.run import Item, RunMarks, RunState
from plait.engine.store import Pool
from plait.server.queue import runs
from plait.server.queue.leases import Lease

log = logging.getLogger(__name__)


class LiveState:
    """The state of one attempt as its items arrive, written to its run row."""

    def __init__(self, pool: Pool, lease: Lease, marks: RunMarks, written: RunState) -> None:
        self.pool, self.lease, self.marks = pool, lease, marks
        self._written: tuple[RunState, Any] = (written, marks.losses())
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def observe(self, item: Item) -> None:
        """Take in one stream item (called in the graph's task: never waits)."""
        if self.marks.observe(item):
            self._ensure()
            self._wake.set()

    def _ensure(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._write_loop())

    async def _write_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self._write()
            left = self.marks.retry_left()
            if left > 0:
                # Back at `running` once the back-off is over, unless a new mark comes first.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), left)
                self._wake.set()

    async def _write(self) -> None:
        wanted = self.marks.live()
        if wanted == self._written:
            return
        try:
            if await runs.set_state(self.pool, self.lease, *wanted):
                self._written = wanted
        except Exception as exc:  # a state note must never fail the run
            log.warning("run %s: recording its state failed: %s", self.lease.run_id, exc)

    async def close(self) -> None:
        """Stop writing (the run ends: its finish records the final state)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
