"""Append one run's events to its journal in order, batching what piles up meanwhile.

A run can emit hundreds of message chunks a second; one transaction per
event would make the database the bottleneck, while waiting to fill a batch
would delay the first event. This writer does neither: a background task
writes whatever is queued in one transaction, and whatever is emitted while
that write is in flight goes into the next one (group commit). An idle run's
event therefore reaches the journal after one round trip, and a busy run's
events cost one commit per batch.
"""

from __future__ import annotations

import asyncio
from typing import Any

from engine.store.pool import Pool
from server import journal


class JournalWriter:
    """Writes the events :meth:`emit` is given, in order, until :meth:`close`.

    Use as an async context manager, or call :meth:`start` and :meth:`close`.
    """

    def __init__(self, pool: Pool, run_id: str) -> None:
        self.pool = pool
        self.run_id = run_id
        self._pending: list[tuple[str, Any]] = []
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> JournalWriter:
        self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def start(self) -> None:
        """Start the background writer."""
        self._task = asyncio.create_task(self._write_loop(), name=f"journal {self.run_id}")

    def emit(self, event: str, data: Any) -> None:
        """Queue ``event`` (JSON-like ``data``); it is written after every earlier one."""
        if self._closing:
            raise RuntimeError(f"the journal writer of run {self.run_id} is closed")
        if self._task is not None and self._task.done():
            # Surface a failed write to the run instead of silently dropping events.
            self._task.result()
        self._pending.append((event, data))
        self._wake.set()

    async def close(self) -> None:
        """Write what is queued and stop; raises the error of a failed write."""
        self._closing = True
        self._wake.set()
        if self._task is not None:
            task, self._task = self._task, None
            await task

    async def _write_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._pending = self._pending, []
            if batch:
                await self._write(batch)
            if self._closing and not self._pending:
                return

    async def _write(self, batch: list[tuple[str, Any]]) -> None:
        # One transaction per batch: one commit, and one NOTIFY for listeners.
        await journal.append_many(self.pool, self.run_id, batch)
