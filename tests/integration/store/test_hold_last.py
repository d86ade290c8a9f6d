"""``hold_last``: a step's checkpoint waits for the next step's nodes, the last one for the end.

The nodes here do what Plait's nodes do first (``NodeRunner``): wait for
:meth:`StepSaver.stored`. Each then counts the thread's checkpoints in the
database, which must already hold the step before it.
"""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from plait.engine.store.checkpointer import StepSaver, new_checkpointer
from plait.engine.store.pool import Pool

pytestmark = pytest.mark.postgres


class _State(TypedDict):
    steps: Annotated[list[str], operator.add]
    seen: Annotated[list[int], operator.add]


async def _stored_count(pool: Pool, thread_id: str) -> int:
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT count(*) AS n FROM checkpoints WHERE thread_id = %s", (thread_id,)
        )
        row = await cursor.fetchone()
    assert row is not None
    return int(row["n"])


def _graph(pool: Pool, *, ask: bool = False, fail: bool = False) -> StateGraph[_State]:
    """a -> b -> c; each node waits for the saver, then records how many checkpoints are stored."""

    def node(name: str) -> Any:
        async def run(state: _State, config: RunnableConfig) -> dict[str, Any]:
            saver = config["configurable"]["__pregel_checkpointer"]
            if isinstance(saver, StepSaver):
                await saver.stored()
            seen = await _stored_count(pool, config["configurable"]["thread_id"])
            if name == "c" and fail:
                raise RuntimeError("c failed")
            if name == "c" and ask:
                interrupt({"question": "go on?"})
            return {"steps": [name], "seen": [seen]}

        return run

    graph = StateGraph(_State)
    for name, after in (("a", START), ("b", "a"), ("c", "b")):
        graph.add_node(name, node(name))
        graph.add_edge(after, name)
    graph.add_edge("c", END)
    return graph


def _config() -> dict[str, Any]:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


async def _store_last(pool: Pool, saver: StepSaver) -> None:
    """What the worker's end does: the held statement in a transaction of the caller's."""
    async with saver.last_step() as statement, pool.connection() as conn, conn.transaction():
        assert statement is not None
        await conn.execute(statement[0], statement[1], binary=True)


async def test_each_step_waits_for_the_checkpoint_before_it_and_the_last_waits_for_the_end(
    pool: Pool,
) -> None:
    saver = new_checkpointer(pool)
    graph = _graph(pool).compile(checkpointer=saver)
    config = _config()
    thread_id = config["configurable"]["thread_id"]
    async with saver.steps_in_one_trip(hold_last=True):
        final = await graph.ainvoke({"steps": [], "seen": []}, config, durability="sync")

    # The input's checkpoint and one per finished step were stored before each node ran.
    assert final["steps"] == ["a", "b", "c"]
    assert final["seen"] == [2, 3, 4]
    # The last step's checkpoint is held for the end, not stored.
    assert await _stored_count(pool, thread_id) == 4
    await _store_last(pool, saver)
    assert await _stored_count(pool, thread_id) == 5

    # What is stored reads back as LangGraph's own saver stores the same run.
    own = _graph(pool).compile(checkpointer=AsyncPostgresSaver(pool))
    other = _config()
    await own.ainvoke({"steps": [], "seen": []}, other, durability="sync")
    assert (await graph.aget_state(config)).values == (await own.aget_state(other)).values
    assert await _stored_count(pool, other["configurable"]["thread_id"]) == 5


async def test_an_interrupts_writes_go_with_the_last_checkpoint(pool: Pool) -> None:
    saver = new_checkpointer(pool)
    graph = _graph(pool, ask=True).compile(checkpointer=saver)
    config = _config()
    async with saver.steps_in_one_trip(hold_last=True):
        await graph.ainvoke({"steps": [], "seen": []}, config, durability="sync")
    await _store_last(pool, saver)

    state = await graph.aget_state(config)
    assert [i.value for i in state.interrupts] == [{"question": "go on?"}]
    async with saver.steps_in_one_trip(hold_last=True):
        final = await graph.ainvoke(Command(resume="yes"), config, durability="sync")
    await _store_last(pool, saver)
    assert final["steps"] == ["a", "b", "c"]
    assert (await graph.aget_state(config)).next == ()


async def test_a_run_that_fails_stores_every_checkpoint_itself(pool: Pool) -> None:
    saver = new_checkpointer(pool)
    graph = _graph(pool, fail=True).compile(checkpointer=saver)
    config = _config()
    with pytest.raises(RuntimeError, match="c failed"):
        async with saver.steps_in_one_trip(hold_last=True):
            await graph.ainvoke({"steps": [], "seen": []}, config, durability="sync")

    # Nothing is left for an end that will not take it: b's checkpoint and c's error.
    async with saver.last_step() as statement:
        assert statement is None
    state = await graph.aget_state(config)
    assert state.values["steps"] == ["a", "b"]
    assert state.next == ("c",)
    assert [task.error for task in state.tasks if task.error] != []


async def test_an_end_that_fails_leaves_the_last_checkpoint_stored(pool: Pool) -> None:
    saver = new_checkpointer(pool)
    graph = _graph(pool).compile(checkpointer=saver)
    config = _config()
    thread_id = config["configurable"]["thread_id"]
    async with saver.steps_in_one_trip(hold_last=True):
        await graph.ainvoke({"steps": [], "seen": []}, config, durability="sync")

    with pytest.raises(ConnectionError):
        async with saver.last_step() as statement:
            assert statement is not None
            raise ConnectionError("the end's transaction failed")
    assert await _stored_count(pool, thread_id) == 5
    assert (await graph.aget_state(config)).values["steps"] == ["a", "b", "c"]
