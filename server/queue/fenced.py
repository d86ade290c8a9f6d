"""A run's checkpoints and tool results, written only while its worker holds the lease.

A worker cut off from the database (or stalled) past its lease keeps executing
until it hears that another worker took its run over; what it then writes
arrives late. :class:`FencedCheckpointer` and :class:`FencedToolResultStore`
put :func:`plait.server.queue.leases.fence` in front of each write, in the same
transaction, so a late checkpoint never forks the thread the new worker
continues, and a late tool result is never recorded as this run's. Reading a
recorded tool result is fenced too, and so is the intent a non-idempotent call
records before it acts: a worker that lost the run finds out before it calls
the tool again, not after.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from psycopg import AsyncConnection, AsyncCursor
from psycopg.rows import DictRow, dict_row

from plait.engine.store import (
    Pool,
    PostgresToolResultStore,
    ReadAhead,
    RecordedResult,
    StepSaver,
    begin_intent,
    park_intent,
    pipelined_transaction,
    read_record,
    write_record,
)
from plait.server.queue import runs
from plait.server.queue.leases import Lease, fence, fence_query, fenced_transaction, refused_as


class FencedCheckpointer(StepSaver):
    """LangGraph's Postgres saver whose writes need ``lease``.

    :class:`StepSaver` stores a checkpoint and task writes in one statement
    that begins with its guard; here the guard is the fence, so a refused
    lease stores nothing of the write and costs no extra round trip. LangGraph's
    other writes (``_cursor(pipeline=True)``: deleting or copying a thread) run
    in a transaction that begins with the fence. Reads are not fenced. The
    version is pinned in pyproject.toml;
    ``tests/integration/server/queue/test_fencing.py`` fails if a write escapes.

    With ``lost_attempts`` (the claimed run had some), the first checkpoint the
    attempt saves (a finished step) also resets them, in its transaction.
    """

    def __init__(
        self,
        pool: Pool,
        lease: Lease,
        *,
        lost_attempts: bool = False,
        read_ahead: ReadAhead | None = None,
    ) -> None:
        super().__init__(pool, read_ahead=read_ahead)
        self.pool = pool
        self.lease = lease
        self._reset_lost = lost_attempts
        self._saving_checkpoint = False

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint (fenced); the first one after lost attempts resets them."""
        self._saving_checkpoint = self._reset_lost
        try:
            saved = await super().aput(config, checkpoint, metadata, new_versions)
        finally:
            self._saving_checkpoint = False
        self._reset_lost = False
        return saved

    def _guard(self) -> tuple[str, tuple[Any, ...]]:
        return fence_query(self.lease)

    def _may_hold(self) -> bool:
        # The checkpoint that resets lost attempts is written with that reset, at once.
        return not self._reset_lost

    async def _execute(
        self, conn: AsyncConnection[DictRow], query: str, params: tuple[Any, ...]
    ) -> None:
        with refused_as(self.lease, "checkpoint"):
            if not self._saving_checkpoint:
                await conn.execute(query, params, binary=True)
                return
            async with pipelined_transaction(conn), conn.cursor() as cur:
                await runs.note_progress(cur, self.lease)
                await cur.execute(query, params, binary=True)

    @asynccontextmanager
    async def _write_cursor(self) -> AsyncIterator[AsyncCursor[DictRow]]:
        await self.stored()
        with refused_as(self.lease, "checkpoint"):
            async with (
                self.lock,
                self.pool.connection() as conn,
                pipelined_transaction(conn),
                conn.cursor(binary=True, row_factory=dict_row) as cur,
            ):
                await fence(cur, self.lease)
                yield cur


class FencedToolResultStore(PostgresToolResultStore):
    """Recorded tool results of one run attempt: read and written only under ``lease``."""

    def __init__(self, pool: Pool, lease: Lease) -> None:
        super().__init__(pool)
        self.lease = lease

    async def get(self, key: str) -> RecordedResult | None:
        """The record under ``key``; :class:`LeaseLost` when the run is no longer ours."""
        async with fenced_transaction(self.pool, self.lease, "tool call", pipeline=True) as conn:
            return await read_record(conn, key)

    async def put(
        self,
        key: str,
        record: RecordedResult,
        *,
        thread_id: str,
        run_id: str | None,
        node: str,
        tool: str,
        args: Mapping[str, Any],
        path: str | None = None,
    ) -> RecordedResult:
        """Record ``record`` (first writer wins); :class:`LeaseLost` when the run is not ours."""
        async with fenced_transaction(self.pool, self.lease, "tool result", pipeline=True) as conn:
            return await write_record(
                conn,
                key,
                record,
                thread_id=thread_id,
                run_id=run_id,
                node=node,
                tool=tool,
                args=args,
                path=path,
            )

    async def begin(
        self,
        key: str,
        attempt: int,
        *,
        answered_run: str | None,
        thread_id: str,
        run_id: str | None,
        node: str,
        tool: str,
        args: Mapping[str, Any],
    ) -> bool:
        """Record that a non-idempotent call begins (committed on return); :class:`LeaseLost`
        when the run is not ours: a stale attempt never starts a call with an effect."""
        # Not pipelined: the statement's row count is its answer.
        async with fenced_transaction(self.pool, self.lease, "tool call") as conn:
            return await begin_intent(
                conn,
                key,
                attempt,
                answered_run=answered_run,
                thread_id=thread_id,
                run_id=run_id,
                node=node,
                tool=tool,
                args=args,
            )

    async def park(self, key: str) -> None:
        """Mark the call under ``key`` parked; :class:`LeaseLost` when the run is not ours."""
        async with fenced_transaction(self.pool, self.lease, "parking a tool call") as conn:
            await park_intent(conn, key)
