"""Budgets: usage is counted per step and per model call; each ``on_exceed`` does what it says."""

from __future__ import annotations

from typing import Any

import pytest

from plait.engine.governance.budgets import USAGE, BudgetExceeded, read_usage
from tests.unit.compiler.helpers import Runner, chain, make_spec, scripted

#: Each call of ``main`` costs 1000 * 1 + 500 * 2 = 2000 per million: 0.002.
MAIN = {
    **scripted({"content": "from main", "usage": {"input_tokens": 1000, "output_tokens": 500}}),
    "price": {"input_per_million": 1.0, "output_per_million": 2.0},
}
CHEAP = {
    **scripted({"content": "from cheap", "usage": {"input_tokens": 10, "output_tokens": 5}}),
    "price": {"input_per_million": 0.1, "output_per_million": 0.1},
}
STATE = {"a": {}, "b": {}, "c": {}}


def _llm(field: str) -> dict[str, Any]:
    return {"kind": "llm", "model": "main", "prompt": "go", "output": field}


def _three_steps(**budgets: Any) -> Any:
    return make_spec(
        {"a": _llm("a"), "b": _llm("b"), "c": _llm("c")},
        chain("a", "b", "c"),
        STATE,
        models={"main": MAIN, "cheap": CHEAP},
        budgets=budgets,
    )


async def _stream(runner: Runner, payload: Any) -> tuple[list[dict[str, Any]], Exception | None]:
    """Budget events of one run, and the error it ended with."""
    events: list[dict[str, Any]] = []
    try:
        async for chunk in runner.graph.astream(payload, runner.config, stream_mode="custom"):
            if chunk.get("plait") == "budget":
                events.append(chunk)
    except Exception as exc:
        return events, exc
    return events, None


async def test_max_steps_fail_names_the_limit_and_keeps_what_ran() -> None:
    runner = Runner(_three_steps(max_steps=2))
    events, error = await _stream(runner, {})
    assert isinstance(error, BudgetExceeded)
    assert error.limit == "max_steps"
    assert str(error) == "node 'c': budget max_steps=2 exceeded (used 2)"
    state = await runner.state()
    assert (state["a"], state["b"], state["c"]) == ("from main", "from main", None)
    totals = [e["usage"] for e in events if "exceeded" not in e]
    assert [(u["steps"], u["tokens"]) for u in totals] == [(1, 1500), (2, 3000)]
    assert totals[-1]["cost"] == pytest.approx(0.004)
    assert events[-1]["exceeded"] == "max_steps"
    assert events[-1]["action"] == "fail"


async def test_fallback_switches_the_remaining_model_calls() -> None:
    runner = Runner(_three_steps(max_tokens=2000, on_exceed="fallback", fallback_model="cheap"))
    events, error = await _stream(runner, {})
    assert error is None
    state = await runner.state()
    assert (state["a"], state["b"], state["c"]) == ("from main", "from main", "from cheap")
    exceeded = [e for e in events if "exceeded" in e]
    assert [(e["exceeded"], e["action"], e["node"]) for e in exceeded] == [
        ("max_tokens", "fallback", "c")
    ]
    usage = await read_usage(runner.saver, runner.config)
    assert usage is not None
    assert (usage["steps"], usage["input_tokens"], usage["output_tokens"]) == (3, 2010, 1005)
    assert usage["cost"] == pytest.approx(0.004 + 15 * 0.1 / 1e6)
    assert usage["fallback"] is True


async def test_return_ends_the_run_with_what_is_known() -> None:
    runner = Runner(_three_steps(max_cost=0.003, on_exceed="return"))
    events, error = await _stream(runner, {})
    assert error is None
    state = await runner.state()
    assert (state["a"], state["b"], state["c"]) == ("from main", "from main", None)
    assert (await runner.graph.aget_state(runner.config)).next == ()
    usage = await read_usage(runner.saver, runner.config)
    assert usage is not None
    assert usage["stopped"] == "budget max_cost=0.003 reached"
    assert usage["steps"] == 2
    assert events[-1]["usage"]["stopped"] == "budget max_cost=0.003 reached"


async def test_return_also_stops_a_cycle_and_a_route_edge() -> None:
    nodes = {
        "a": {**_llm("a"), "max_visits": 50},
        "pick": {"kind": "router", "label": "'again'", "labels": ["again"]},
    }
    edges = [
        {"from": "START", "to": "a"},
        {"from": "a", "to": "pick"},
        {"from": "pick", "route": "result", "to": {"again": "a"}},
    ]
    spec = make_spec(
        nodes, edges, STATE, models={"main": MAIN}, budgets={"max_steps": 5, "on_exceed": "return"}
    )
    runner = Runner(spec)
    await runner.start()
    usage = await read_usage(runner.saver, runner.config)
    assert usage is not None
    assert usage["steps"] == 5
    assert usage["stopped"] == "budget max_steps=5 reached"


async def test_approval_parks_the_run_and_an_approval_lifts_the_limit() -> None:
    runner = Runner(_three_steps(max_steps=1, on_exceed="approval"))
    parked = await runner.start()
    (pending,) = parked["__interrupt__"]
    assert pending.value == {
        "kind": "approval",
        "node": "b",
        "action": "exceed_budget",
        "arguments": {"limit": "max_steps", "value": 1.0, "used": 1},
        "reason": "budget max_steps=1 reached (used 1)",
        "expires_at": None,
        "on_expire": "reject",
    }
    out = await runner.resume({"decision": "approve"})
    assert (out["a"], out["b"], out["c"]) == ("from main", "from main", "from main")
    usage = await read_usage(runner.saver, runner.config)
    assert usage is not None
    # Counted across the interrupt: the checkpointed totals survive the resume.
    assert usage["steps"] == 3
    assert usage["waived"] == ["max_steps"]


async def test_a_rejected_approval_fails_the_run() -> None:
    runner = Runner(_three_steps(max_steps=1, on_exceed="approval"))
    await runner.start()
    with pytest.raises(BudgetExceeded, match=r"node 'b': budget max_steps=1 exceeded"):
        await runner.resume({"decision": "reject"})


async def test_the_agent_loop_is_checked_before_every_model_call() -> None:
    looping = {
        "tool_calls": [{"name": "lookup", "args": {"query": "x"}}],
        "usage": {"input_tokens": 100, "output_tokens": 0},
    }
    spec = make_spec(
        {"agent": {"kind": "agent", "model": "m", "tools": ["lookup"], "prompt": "go"}},
        chain("agent"),
        {},
        models={"m": scripted(looping)},
        tools={"lookup": {"function": "plait_compiler_fns:lookup"}},
        budgets={"max_tokens": 250},
    )
    runner = Runner(spec)
    with pytest.raises(BudgetExceeded, match=r"budget max_tokens=250 exceeded \(used 300\)"):
        await runner.start()


async def test_parallel_branches_add_up() -> None:
    nodes = {
        "fan": {"kind": "parallel", "branches": ["a", "b"], "join": "c"},
        "a": _llm("a"),
        "b": _llm("b"),
        "c": _llm("c"),
    }
    edges = [{"from": "START", "to": "fan"}, {"from": "c", "to": "END"}]
    spec = make_spec(nodes, edges, STATE, models={"main": MAIN}, budgets={"max_steps": 100})
    runner = Runner(spec)
    await runner.start()
    usage = await read_usage(runner.saver, runner.config)
    assert usage is not None
    assert (usage["steps"], usage["input_tokens"]) == (4, 3000)


async def test_specs_without_budgets_are_unchanged() -> None:
    spec = make_spec({"a": _llm("a")}, chain("a"), STATE, models={"main": MAIN})
    runner = Runner(spec)
    await runner.start()
    assert USAGE not in runner.graph.channels
    assert await read_usage(runner.saver, runner.config) is None


async def test_wall_time_counts_from_the_first_step() -> None:
    nodes = {
        "wait": {
            "kind": "python",
            "function": "plait_compiler_fns:sleep_for",
            "args": {"seconds": "0.05"},
        },
        "a": _llm("a"),
    }
    spec = make_spec(
        nodes,
        chain("wait", "a"),
        STATE,
        models={"main": MAIN},
        budgets={"max_wall_time": "20ms"},
    )
    runner = Runner(spec)
    events, error = await _stream(runner, {})
    assert isinstance(error, BudgetExceeded)
    assert error.limit == "max_wall_time"
    assert error.usage["wall_time"] >= 0.05
    assert events[0]["usage"]["wall_time"] >= 0.05
    assert (await runner.state())["a"] is None
