"""LangGraph checkpoints in Postgres, each step's in one round trip while a run is driven."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.postgres import WRITES_IDX_MAP
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncCursor
from psycopg.rows import DictRow

from plait.engine.store.pool import Pool

#: How long a finished task's writes wait for the checkpoint of their step before
#: they are written on their own (a step whose other tasks still run).
HOLD_SECONDS = 0.01


class StepSaver(AsyncPostgresSaver):
    """LangGraph's Postgres saver that writes a step's task writes with its checkpoint.

    LangGraph saves each finished task's writes in a transaction of its own,
    then the step's checkpoint in another: with ``durability="sync"`` a
    one-task step costs two round trips and two commits. Inside
    :meth:`steps_in_one_trip` a task's writes are held for up to
    :data:`HOLD_SECONDS` and sent at the head of the next write the saver
    makes, which for a step whose tasks have all finished is its checkpoint
    (LangGraph saves it at once). A step whose other tasks still run gets its
    finished tasks' writes written on their own when the hold ends, as
    LangGraph would, so a crash never runs a finished task again; whatever is
    held when the block ends (an interrupt's or an error's writes) is written
    then. A checkpoint is never stored before the writes that produced it: they
    go first in its pipeline. Outside the block the saver saves as LangGraph
    does, so the API's state updates need nothing more.
    """

    def __init__(self, pool: Pool) -> None:
        super().__init__(pool)
        self._held: list[tuple[str, list[tuple[Any, ...]]]] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timed_writes: set[asyncio.Task[None]] = set()

    @contextlib.asynccontextmanager
    async def steps_in_one_trip(self) -> AsyncIterator[None]:
        """Hold task writes for the checkpoint that follows them (see the class)."""
        self._held = []
        try:
            yield
        finally:
            # Shielded: a cancelled run still stores what its finished tasks wrote.
            await asyncio.shield(self._write_rest())

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes: now, or inside the block with what the saver writes next."""
        if self._held is None:
            await super().aput_writes(config, writes, task_id, task_path)
            return
        query = (
            self.UPSERT_CHECKPOINT_WRITES_SQL
            if all(channel in WRITES_IDX_MAP for channel, _ in writes)
            else self.INSERT_CHECKPOINT_WRITES_SQL
        )
        configurable = config["configurable"]
        # Encoded here, not in a thread as LangGraph does: the handoff to a thread and
        # back costs more than encoding a task's writes, and the GIL is held either way.
        params = self._dump_writes(
            configurable["thread_id"],
            configurable["checkpoint_ns"],
            configurable["checkpoint_id"],
            task_id,
            task_path,
            writes,
        )
        self._held.append((query, params))
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(HOLD_SECONDS, self._hold_ended)

    def _hold_ended(self) -> None:
        self._timer = None
        if self._held:
            task = asyncio.create_task(self._write_held_alone())
            self._timed_writes.add(task)
            task.add_done_callback(self._timed_writes.discard)

    async def _write_held_alone(self) -> None:
        async with self._cursor(pipeline=True):
            pass  # the cursor writes what is held

    async def _write_rest(self) -> None:
        try:
            if self._timed_writes:
                # A failed one raises here (e.g. the lease is gone): the run must hear it.
                await asyncio.gather(*self._timed_writes)
            if self._held:
                await self._write_held_alone()
        finally:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._held = None

    @contextlib.asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[AsyncCursor[DictRow]]:
        if not pipeline:
            async with super()._cursor() as cur:
                yield cur
            return
        async with self._write_cursor() as cur:
            await self._write_held(cur)
            yield cur

    @contextlib.asynccontextmanager
    async def _write_cursor(self) -> AsyncIterator[AsyncCursor[DictRow]]:
        """The cursor LangGraph writes through (a subclass may wrap it in a transaction)."""
        async with super()._cursor(pipeline=True) as cur:
            yield cur

    async def _write_held(self, cur: AsyncCursor[DictRow]) -> None:
        """Send the held task writes first on ``cur``."""
        if not self._held:
            return
        held, self._held = self._held, []
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for query, params in held:
            await cur.executemany(query, params)


def new_checkpointer(pool: Pool) -> StepSaver:
    """A fresh saver over ``pool``; create one per run.

    langgraph-checkpoint-postgres 3.2.0 guards every call of a saver with one
    asyncio lock, so a saver shared by concurrent runs would serialise them.
    Savers are cheap: the pool is what holds connections.
    """
    return StepSaver(pool)


def steps_in_one_trip(saver: object) -> contextlib.AbstractAsyncContextManager[None]:
    """:meth:`StepSaver.steps_in_one_trip` of ``saver``; nothing for another saver."""
    if isinstance(saver, StepSaver):
        return saver.steps_in_one_trip()
    return contextlib.nullcontext()
