"""LangGraph checkpoints round-trip through the Postgres saver."""

from __future__ import annotations

import uuid

import pytest

from plait.engine.store.checkpointer import new_checkpointer
from plait.engine.store.pool import Pool, open_pool
from tests.integration.store.two_steps import two_steps

pytestmark = pytest.mark.postgres


async def test_state_survives_a_new_pool_and_saver(pool: Pool, database_url: str) -> None:
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    compiled = two_steps().compile(checkpointer=new_checkpointer(pool), interrupt_before=["b"])
    await compiled.ainvoke({"steps": []}, config, durability="sync")

    # A different pool and saver, as in a second `plait run` process.
    async with await open_pool(database_url) as other_pool:
        resumed = two_steps().compile(
            checkpointer=new_checkpointer(other_pool), interrupt_before=["b"]
        )
        paused = await resumed.aget_state(config)
        assert paused.next == ("b",)
        assert paused.values == {"steps": ["a"]}

        final = await resumed.ainvoke(None, config, durability="sync")

    assert final == {"steps": ["a", "b"]}


async def test_each_call_gives_a_separate_saver(pool: Pool) -> None:
    assert new_checkpointer(pool) is not new_checkpointer(pool)
