"""LangGraph checkpoints in Postgres."""

from __future__ import annotations

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from plait.engine.store.pool import Pool


def new_checkpointer(pool: Pool) -> AsyncPostgresSaver:
    """A fresh saver over ``pool``; create one per run.

    langgraph-checkpoint-postgres 3.2.0 guards every call of a saver with one
    asyncio lock, so a saver shared by concurrent runs would serialise them.
    Savers are cheap: the pool is what holds connections.
    """
    return AsyncPostgresSaver(pool)
