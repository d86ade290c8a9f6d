"""Plait's saver stores a step in one statement, and stores what LangGraph's own saver stores."""

from __future__ import annotations

import contextlib
import operator
import re
import uuid
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from plait.engine.store import checkpointer
from plait.engine.store.checkpointer import StepSaver, new_checkpointer
from plait.engine.store.pool import Pool

pytestmark = pytest.mark.postgres


class _State(TypedDict):
    steps: Annotated[list[str], operator.add]
    count: int
    note: str


def _step(name: str) -> Any:
    def node(state: _State) -> dict[str, Any]:
        return {"steps": [name], "count": state["count"] + 1}

    return node


def _ask(state: _State) -> dict[str, Any]:
    answer = interrupt({"question": "go on?", "count": state["count"]})
    # A second question in the same task replaces the first one's interrupt write.
    sure = interrupt({"question": "sure?", "answer": answer})
    return {"steps": ["ask"], "note": f"{answer}, {sure}"}


def _fail_once(state: _State) -> dict[str, Any]:
    if state["note"] != "retry":
        raise RuntimeError("the tool is down")
    return {"steps": ["done"]}


def _graph() -> StateGraph[_State]:
    """a -> (b1 | b2) -> ask (interrupts twice) -> end_step (fails until told to retry)."""
    graph = StateGraph(_State)
    graph.add_node("a", _step("a"))
    graph.add_node("b1", _step("b1"))
    graph.add_node("b2", lambda state: {"steps": ["b2"]})
    graph.add_node("ask", _ask)
    graph.add_node("end_step", _fail_once)
    graph.add_edge(START, "a")
    graph.add_edge("a", "b1")
    graph.add_edge("a", "b2")
    graph.add_edge(["b1", "b2"], "ask")
    graph.add_edge("ask", "end_step")
    graph.add_edge("end_step", END)
    return graph


async def _history(saver: AsyncPostgresSaver, *, one_trip: bool) -> list[dict[str, Any]]:
    """Run the graph through an interrupt, a failure and a retry; its history as read back."""
    compiled = _graph().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}

    def held() -> contextlib.AbstractAsyncContextManager[None]:
        if one_trip and isinstance(saver, StepSaver):
            return saver.steps_in_one_trip()
        return contextlib.nullcontext()

    async with held():
        await compiled.ainvoke({"steps": [], "count": 0, "note": ""}, config, durability="sync")
    async with held():
        await compiled.ainvoke(Command(resume="no"), config, durability="sync")
    pending = (await compiled.aget_state(config)).interrupts
    assert [i.value["question"] for i in pending] == ["sure?"]
    async with held():
        with pytest.raises(RuntimeError, match="the tool is down"):
            await compiled.ainvoke(Command(resume="yes"), config, durability="sync")
    await compiled.aupdate_state(config, {"note": "retry"})
    async with held():
        final = await compiled.ainvoke(None, config, durability="sync")
    assert final["steps"] == ["a", "b1", "b2", "ask", "done"]

    # Ids differ per thread (they carry the time); what each checkpoint holds must not.
    history = []
    async for saved in saver.alist(config):
        history.append(
            {
                "values": saved.checkpoint["channel_values"],
                "source": saved.metadata.get("source"),
                "step": saved.metadata.get("step"),
                "writes": sorted(
                    (channel, _without_ids(value))
                    for _, channel, value in saved.pending_writes or []
                ),
            }
        )
    return history


def _without_ids(value: Any) -> str:
    """``value``'s repr without interrupt ids (derived from the thread's task ids)."""
    return re.sub(r"id='[0-9a-f]+'", "id=…", repr(value))


async def test_a_run_reads_back_as_langgraphs_own_saver_stored_it(pool: Pool) -> None:
    langgraph = await _history(AsyncPostgresSaver(pool), one_trip=False)
    assert len(langgraph) == 7
    assert any(w[0] == "__interrupt__" for step in langgraph for w in step["writes"])
    assert any(w[0] == "__error__" for step in langgraph for w in step["writes"])

    assert await _history(new_checkpointer(pool), one_trip=True) == langgraph
    assert await _history(new_checkpointer(pool), one_trip=False) == langgraph


async def test_a_step_is_one_statement_and_one_commit(
    pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step whose task finished costs one round trip: its writes ride with its checkpoint."""
    # On a loaded machine the loop may take longer than the hold between a task's end and
    # its step's checkpoint; writes held that long go alone (by design, tested elsewhere).
    monkeypatch.setattr(checkpointer, "HOLD_SECONDS", 60.0)
    saver = new_checkpointer(pool)
    sent: list[str] = []
    execute = saver._execute

    async def counted(conn: Any, query: str, params: tuple[Any, ...]) -> None:
        sent.append(query)
        await execute(conn, query, params)

    saver._execute = counted  # type: ignore[method-assign]
    graph = StateGraph(_State)
    for name, after in (("a", START), ("b", "a"), ("c", "b")):
        graph.add_node(name, _step(name))
        graph.add_edge(after, name)
    graph.add_edge("c", END)
    compiled = graph.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    async with saver.steps_in_one_trip():
        await compiled.ainvoke({"steps": [], "count": 0, "note": ""}, config, durability="sync")

    # The input's checkpoint, then one per node: each carrying the writes before it.
    assert len(sent) == 5
    assert all(query.count("INSERT INTO checkpoints") == 1 for query in sent)
    assert sum("INSERT INTO checkpoint_writes" in query for query in sent) == 4
