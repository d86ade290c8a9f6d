"""Tool calls run once per step: a node re-run after a crash reuses recorded results."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig

from plait.engine.tools.idempotency import (
    STORE_KEY,
    InMemoryToolResultStore,
    RecordedResult,
    tool_call_key,
)
from plait.engine.tools.python_tools import import_function
from tests.unit.compiler.helpers import FIXTURES, Runner, chain, make_spec, scripted

TOOLS = {
    "charge": {"function": "plait_idempotency_fns:charge"},
    "crash_once": {"function": "plait_idempotency_fns:crash_once"},
    "charge_or_crash": {"function": "plait_idempotency_fns:charge_or_crash"},
}


# The module the tools run from (imported from the spec's folder, like the compiler does),
# not a second copy under the tests package.
fns = sys.modules[import_function("plait_idempotency_fns:charge", FIXTURES).__module__]


@pytest.fixture(autouse=True)
def _fresh_side_effects() -> None:
    fns.CHARGES.clear()
    fns.CRASHED.clear()


def _runner(spec: Any, store: InMemoryToolResultStore | None) -> Runner:
    runner = Runner(spec)
    if store is not None:
        runner.config["configurable"][STORE_KEY] = store
    return runner


async def _stream(runner: Runner, payload: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Run (or continue, with ``None``) and return the tool_call custom events."""
    events = []
    async for data in runner.graph.astream(payload, runner.config, stream_mode="custom"):
        if data.get("plait") == "tool_call":
            events.append(data)
    return events


def _agent_spec() -> Any:
    # Iteration 0 charges, iteration 1 "dies" in crash_once, iteration 2 answers.
    model = scripted(
        {"tool_calls": [{"name": "charge", "args": {"order": "o1"}}]},
        {"tool_calls": [{"name": "crash_once", "args": {"key": "agent"}}]},
        {"content": "charged"},
    )
    node = {
        "kind": "agent",
        "model": "m",
        "tools": ["charge", "crash_once"],
        "prompt": "Charge it",
        "output": "answer",
        "messages": "chat",
    }
    return make_spec(
        {"pay": node},
        chain("pay"),
        {"answer": {}, "chat": {"type": "messages", "reducer": "add_messages"}},
        models={"m": model},
        tools=TOOLS,
    )


async def test_agent_rerun_after_a_crash_reuses_the_finished_tool_call() -> None:
    store = InMemoryToolResultStore()
    runner = _runner(_agent_spec(), store)
    with pytest.raises(fns.Crash):
        await _stream(runner, {})
    assert fns.CHARGES == ["o1"]
    assert len(store.records) == 1  # crash_once raised: nothing recorded for it

    events = await _stream(runner, None)  # continue the thread: the node runs again

    assert fns.CHARGES == ["o1"]
    out = await runner.state()
    assert out["answer"] == "charged"
    tool_messages = [m for m in out["chat"] if isinstance(m, ToolMessage)]
    assert [m.content for m in tool_messages] == ['{"receipt": "r-o1-1"}', "done agent"]
    assert [(e["tool"], e["status"], e["reused"]) for e in events] == [
        ("charge", "ok", True),
        ("crash_once", "started", False),
        ("crash_once", "ok", False),
    ]
    assert events[0]["node"] == "pay" and events[0]["args"] == {"order": "o1"}


async def test_without_a_store_the_rerun_calls_the_tool_again() -> None:
    runner = _runner(_agent_spec(), None)
    with pytest.raises(fns.Crash):
        await runner.start()
    await runner.graph.ainvoke(None, runner.config)
    assert fns.CHARGES == ["o1", "o1"]


async def test_map_items_rerun_after_a_crash_reuse_the_finished_items() -> None:
    nodes = {
        "each": {
            "kind": "map",
            "items": "state.orders",
            "concurrency": 1,
            "do": {"kind": "tool", "tool": "charge_or_crash", "args": {"order": "item"}},
            "output": "receipts",
        }
    }
    spec = make_spec(nodes, chain("each"), {"orders": {}, "receipts": {}}, tools=TOOLS)
    store = InMemoryToolResultStore()
    runner = _runner(spec, store)
    with pytest.raises(fns.Crash):
        await runner.start({"orders": ["a", "a", "crash"]})
    # The same arguments at two item indexes are two calls, each recorded.
    assert fns.CHARGES == ["a", "a"]
    assert len(store.records) == 2

    events = await _stream(runner, None)

    assert fns.CHARGES == ["a", "a", "crash"]
    assert (await runner.state())["receipts"] == [
        {"receipt": "r-a-1"},
        {"receipt": "r-a-2"},
        {"receipt": "r-crash-3"},
    ]
    assert [(e["item"], e["status"], e["reused"]) for e in events] == [
        (0, "ok", True),
        (1, "ok", True),
        (2, "started", False),
        (2, "ok", False),
    ]


CONFIG: RunnableConfig = {"configurable": {"thread_id": "t1", "checkpoint_ns": "pay:task-1"}}


def test_the_key_is_stable_and_names_thread_step_position_tool_and_arguments() -> None:
    key = tool_call_key(CONFIG, (0, 1), "charge", {"order": "o1", "n": 1})
    assert key == tool_call_key(CONFIG, (0, 1), "charge", {"n": 1, "order": "o1"})
    other_task: RunnableConfig = {
        "configurable": {"thread_id": "t1", "checkpoint_ns": "pay:task-2"}
    }
    other_thread: RunnableConfig = {
        "configurable": {"thread_id": "t2", "checkpoint_ns": "pay:task-1"}
    }
    variants = {
        key,
        tool_call_key(other_task, (0, 1), "charge", {"order": "o1", "n": 1}),
        tool_call_key(other_thread, (0, 1), "charge", {"order": "o1", "n": 1}),
        tool_call_key(CONFIG, (1, 0), "charge", {"order": "o1", "n": 1}),
        tool_call_key(CONFIG, (0, 1), "refund", {"order": "o1", "n": 1}),
        tool_call_key(CONFIG, (0, 1), "charge", {"order": "o2", "n": 1}),
    }
    assert len(variants) == 6


def test_no_key_outside_a_checkpointed_step() -> None:
    assert tool_call_key({"configurable": {"thread_id": "t"}}, (0,), "charge", {}) is None
    assert tool_call_key({}, (0,), "charge", {}) is None


async def test_in_memory_store_first_writer_wins() -> None:
    store = InMemoryToolResultStore()
    context: dict[str, Any] = {
        "thread_id": "t",
        "run_id": None,
        "node": "n",
        "tool": "charge",
        "args": {},
    }
    first = await store.put("k", RecordedResult.now(1), **context)
    second = await store.put("k", RecordedResult.now(2), **context)
    assert first.value == second.value == 1
    assert await store.get("k") == first
    assert await store.get("other") is None


def test_a_tool_call_event_carries_its_result_or_the_beginning_of_a_large_one() -> None:
    # Imported here: imported first, plait.engine.tools.gateway meets the runtime<->compiler
    # import cycle half-way (issue 17 removes it).
    from plait.engine.tools.gateway import RESULT_EVENT_BYTES, result_fields

    assert result_fields({"ticket": "T-1"}) == {"result": {"ticket": "T-1"}}
    large = {"rows": ["x" * 100] * 200}
    fields = result_fields(large)
    assert fields["result_truncated"] is True
    assert fields["result_bytes"] > RESULT_EVENT_BYTES
    assert isinstance(fields["result"], str) and fields["result"].startswith('{"rows": ["xxx')
    assert len(fields["result"].encode()) < RESULT_EVENT_BYTES
