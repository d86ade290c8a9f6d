"""LangGraph checkpoints in Postgres, each step's in one statement while a run is driven."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from psycopg import AsyncConnection, AsyncCursor
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from plait.engine.store.pool import Pool
from plait.engine.store.step_writes import NO_GUARD, StepWrites

#: How long a finished task's writes wait for the checkpoint of their step before
#: they are written on their own (a step whose other tasks still run).
HOLD_SECONDS = 0.01


@dataclass
class ReadAhead:
    """A thread's checkpoint read sent before the saver that needs it is made.

    A worker starts one with a run (:meth:`start`), so the read's round trip
    overlaps the run's set-up instead of following it; the run's saver answers
    its first read with it when that read asks for the same checkpoint. What
    it read is what a read then would have: nothing else writes a thread's
    checkpoints while its run starts. :meth:`discard` it once the run is over.
    """

    #: What it reads: thread, namespace, checkpoint id (None: the latest).
    key: tuple[str, str, str | None]
    task: asyncio.Task[CheckpointTuple | None]

    @classmethod
    def start(cls, pool: Pool, thread_id: str, checkpoint_id: str | None) -> ReadAhead:
        """Send the read of ``thread_id``'s checkpoint ``checkpoint_id`` (None: its latest)."""
        configurable = {"thread_id": thread_id, "checkpoint_ns": ""}
        if checkpoint_id:
            configurable["checkpoint_id"] = checkpoint_id
        read = new_checkpointer(pool).aget_tuple({"configurable": configurable})
        return cls((thread_id, "", checkpoint_id or None), asyncio.ensure_future(read))

    def answers(self, config: RunnableConfig) -> bool:
        """Whether a read of ``config`` asks for this read's checkpoint."""
        configurable = config["configurable"]
        asked = (
            configurable["thread_id"],
            configurable.get("checkpoint_ns", ""),
            get_checkpoint_id(config) or None,
        )
        return asked == self.key

    def discard(self) -> None:
        """Stop the read if no one took it, and leave no error of it unheard."""
        if not self.task.done():
            self.task.cancel()
        elif not self.task.cancelled():
            self.task.exception()


class StepSaver(AsyncPostgresSaver):
    """LangGraph's Postgres saver that stores a step in one statement.

    LangGraph saves each finished task's writes in a pipeline of its own (one
    ``INSERT`` per row), then the step's checkpoint and its blobs in another:
    with ``durability="sync"`` a one-task step costs two round trips, two
    commits and a statement per row. This saver sends every write as one
    statement (:mod:`plait.engine.store.step_writes`: the same rows, one insert
    per table) behind :meth:`_guard`, so a write is one round trip and one
    commit, and a guard that refuses stores nothing of it.

    Inside :meth:`steps_in_one_trip` a task's writes are held for up to
    :data:`HOLD_SECONDS` and go with the next checkpoint, which for a step
    whose tasks have all finished is its own (LangGraph saves it at once):
    one statement per step. A step whose other tasks still run gets its
    finished tasks' writes written on their own when the hold ends, as
    LangGraph would, so a crash never runs a finished task again; whatever is
    held when the block ends (an interrupt's or an error's writes) is written
    then. A checkpoint is never stored without the writes that produced it.
    Outside the block each write is stored at once.

    With ``hold_last`` the block also holds each checkpoint of the graph itself
    (not a subgraph's) until the next step's first node starts, which waits
    for it (:meth:`stored`: Plait's nodes call it before they do anything), or
    until the saver is asked to read or write anything else. So no step runs
    before the checkpoint of the one before it is stored, as with
    ``durability="sync"``; the last checkpoint of a run that ends without an
    error is still held when the block ends, for the caller to store with the
    run's end (:meth:`last_step`): one transaction for both.
    """

    def __init__(self, pool: Pool, *, read_ahead: ReadAhead | None = None) -> None:
        super().__init__(pool)
        self._pool = pool
        self._read_ahead = read_ahead
        self._held: StepWrites | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timed_writes: set[asyncio.Task[None]] = set()
        self._hold_last = False
        # A checkpoint held under hold_last (with any writes that came after it), and
        # the task storing one (every node of the next step waits for the same one).
        self._last: StepWrites | None = None
        self._storing: asyncio.Future[None] | None = None

    @contextlib.asynccontextmanager
    async def steps_in_one_trip(self, *, hold_last: bool = False) -> AsyncIterator[None]:
        """Hold task writes for the checkpoint that follows them, and with ``hold_last`` each
        checkpoint until the next step starts or the block ends (see the class)."""
        self._held = StepWrites()
        self._hold_last = hold_last
        ended = False
        try:
            yield
            ended = True
        finally:
            self._hold_last = False
            # Shielded: a cancelled run still stores what its finished tasks wrote.
            await asyncio.shield(self._write_rest(keep_last=ended and hold_last))

    async def stored(self) -> None:
        """Return once the checkpoint held for the next step (if any) is stored.

        A node calls it before it does anything (:mod:`plait.engine.compiler.nodes.base`);
        the nodes of one step share one write. A failed write fails every caller.
        """
        storing = self._storing
        if storing is None or storing.done():
            if storing is not None:
                storing.result()  # a failed write stays failed: it fails later callers too
                self._storing = None
            if self._last is None:
                return
            last, self._last = self._last, None
            storing = self._storing = asyncio.ensure_future(self._write(last))
        await asyncio.shield(storing)

    @contextlib.asynccontextmanager
    async def last_step(self) -> AsyncIterator[tuple[str, tuple[Any, ...]] | None]:
        """The statement that stores what a ``hold_last`` block left (the run's last checkpoint,
        an interrupt's writes), for the caller's transaction.

        After a block that ended without an error; ``None`` when nothing is held. Run
        it in the transaction that records the run's end, inside this block; if the
        block raises, the saver tries to store it on its own (and raises the block's
        error).
        """
        last, self._last = self._last, None
        if last is None:
            yield None
            return
        try:
            yield last.statement(self._guard())
        except BaseException:
            with contextlib.suppress(Exception):
                await self._write(last)
            raise

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint, its new blobs and the held writes before it, in one statement."""
        configurable = config["configurable"]
        thread_id = configurable["thread_id"]
        checkpoint_ns = configurable["checkpoint_ns"]
        # As langgraph-checkpoint-postgres 3.2.0's aput: primitive values stay inline in
        # the checkpoint, the others (and delta snapshots, marked inline) become blobs.
        copy = checkpoint.copy()
        copy["channel_values"] = inline = dict(checkpoint["channel_values"])
        blob_values: dict[str, Any] = {}
        for channel, value in checkpoint["channel_values"].items():
            if isinstance(value, _DeltaSnapshot):
                blob_values[channel] = inline.pop(channel)
                inline[channel] = True
            elif not (value is None or isinstance(value, str | int | float | bool)):
                blob_values[channel] = inline.pop(channel)
        step = self._take_held()
        step.blobs = self._dump_blobs(
            thread_id,
            checkpoint_ns,
            blob_values,
            {channel: v for channel, v in new_versions.items() if channel in blob_values},
        )
        step.checkpoint = (
            thread_id,
            checkpoint_ns,
            checkpoint["id"],
            configurable.get("checkpoint_id"),
            Jsonb(copy),
            Jsonb(get_serializable_checkpoint_metadata(config, metadata)),
        )
        if self._hold_last and not checkpoint_ns and self._may_hold():
            await self.stored()  # the one before it first (none, when each step had a node)
            self._last = step
        else:
            await self._store(step)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes: now, or inside the block with what the saver writes next."""
        configurable = config["configurable"]
        # Encoded here, not in a thread as LangGraph does: the handoff to a thread and
        # back costs more than encoding a task's writes, and the GIL is held either way.
        rows = self._dump_writes(
            configurable["thread_id"],
            configurable["checkpoint_ns"],
            configurable["checkpoint_id"],
            task_id,
            task_path,
            writes,
        )
        if self._held is None:
            step = StepWrites()
            step.add_writes(rows)
            await self._store(step)
            return
        self._held.add_writes(rows)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(HOLD_SECONDS, self._hold_ended)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` asks for: the read ahead's when it is the first read and
        asks for the same (see :class:`ReadAhead`), otherwise read now."""
        await self.stored()  # a read sees every checkpoint the run made
        ahead, self._read_ahead = self._read_ahead, None
        if ahead is not None:
            if ahead.answers(config):
                return await ahead.task
            ahead.discard()
        return await super().aget_tuple(config)

    async def _load_checkpoint_tuple(self, value: DictRow) -> CheckpointTuple:
        """A checkpoint's row as LangGraph's tuple, its pending writes decoded here.

        LangGraph's async saver decodes them in a thread (as it encodes writes, see
        :meth:`aput_writes`): on every read, even of none, a handoff and a wake-up
        of the loop. Its sync saver's method is the same but for that.
        """
        # The sync saver's method uses only what both savers share (_load_blobs, _load_writes).
        return PostgresSaver._load_checkpoint_tuple(self, value)  # type: ignore[arg-type]

    def _take_held(self) -> StepWrites:
        """The held writes (to go first in the next statement), or nothing held."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._held is None:
            return StepWrites()
        held, self._held = self._held, StepWrites()
        return held

    def _hold_ended(self) -> None:
        self._timer = None
        if self._held:
            task = asyncio.create_task(self._store(self._take_held()))
            self._timed_writes.add(task)
            task.add_done_callback(self._timed_writes.discard)

    async def _write_rest(self, *, keep_last: bool) -> None:
        try:
            if self._timed_writes:
                # A failed one raises here (e.g. the lease is gone): the run must hear it.
                await asyncio.gather(*self._timed_writes)
            if keep_last:
                # What is left (an interrupt's writes) goes with the last checkpoint, if it
                # is still held, to the caller.
                held = self._take_held()
                if self._last is not None:
                    self._last.add_later(held)
                elif held:
                    self._last = held
            else:
                await self.stored()
                if self._held:
                    await self._store(self._take_held())
        finally:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._held = None

    async def _store(self, step: StepWrites) -> None:
        """Store ``step`` after any checkpoint held before it."""
        await self.stored()
        await self._write(step)

    async def _write(self, step: StepWrites) -> None:
        """Send ``step`` as one statement behind :meth:`_guard`."""
        query, params = step.statement(self._guard())
        async with self.lock, self._pool.connection() as conn:
            await self._execute(conn, query, params)

    def _guard(self) -> tuple[str, tuple[Any, ...]]:
        """The query that must pass before anything is stored (a subclass adds a fence)."""
        return NO_GUARD

    def _may_hold(self) -> bool:
        """Whether a checkpoint may wait for the next step (a subclass may need it now)."""
        return True

    async def _execute(
        self, conn: AsyncConnection[DictRow], query: str, params: tuple[Any, ...]
    ) -> None:
        """Run a write statement on ``conn`` (a subclass may wrap it)."""
        await conn.execute(query, params, binary=True)

    @contextlib.asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[AsyncCursor[DictRow]]:
        # LangGraph's other writes (deleting, copying, pruning a thread) take the write cursor.
        cursor = self._write_cursor() if pipeline else super()._cursor()
        async with cursor as cur:
            yield cur

    @contextlib.asynccontextmanager
    async def _write_cursor(self) -> AsyncIterator[AsyncCursor[DictRow]]:
        """The cursor LangGraph's other writes use (a subclass may wrap it in a transaction)."""
        await self.stored()
        async with super()._cursor(pipeline=True) as cur:
            yield cur


def new_checkpointer(pool: Pool) -> StepSaver:
    """A fresh saver over ``pool``; create one per run.

    langgraph-checkpoint-postgres 3.2.0 guards every call of a saver with one
    asyncio lock, so a saver shared by concurrent runs would serialise them.
    Savers are cheap: the pool is what holds connections.
    """
    return StepSaver(pool)


def steps_in_one_trip(
    saver: object, *, hold_last: bool = False
) -> contextlib.AbstractAsyncContextManager[None]:
    """:meth:`StepSaver.steps_in_one_trip` of ``saver``; nothing for another saver."""
    if isinstance(saver, StepSaver):
        return saver.steps_in_one_trip(hold_last=hold_last)
    return contextlib.nullcontext()
