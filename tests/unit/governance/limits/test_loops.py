"""Loop detection: one call too many of the same tool with the same arguments stops the run."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from plait.engine.errors import NodeError
from plait.engine.governance.loops import TOOL_CALLS, LoopDetected
from tests.unit.compiler.helpers import Runner, chain, scripted
from tests.unit.governance.limits.helpers import FNS, events_of, limits_spec, tool_calls


def _agent(key: str, limit: int) -> Any:
    same_call = {"tool_calls": [{"name": "echo", "args": {"key": key, "value": "again"}}]}
    return limits_spec(
        {"agent": {"kind": "agent", "model": "m", "tools": ["echo"], "prompt": "go"}},
        chain("agent"),
        {},
        models={"m": scripted(same_call)},
        tools={"echo": {"function": f"{FNS}:echo"}},
        limits={"max_identical_tool_calls": limit},
    )


async def test_an_agent_repeating_a_call_is_stopped_with_a_clear_reason() -> None:
    key = uuid.uuid4().hex
    events, error = await events_of(Runner(_agent(key, 3)), {}, "loop")
    assert isinstance(error, LoopDetected)
    assert str(error) == (
        "node 'agent': loop detected: tool 'echo' called 4 times with the same arguments "
        f'{{"key": "{key}", "value": "again"}} (limits.max_identical_tool_calls=3)'
    )
    assert tool_calls()[key] == 3
    assert events == [{"plait": "loop", "node": "agent", "tool": "echo", "count": 4, "limit": 3}]


async def test_other_arguments_are_other_calls() -> None:
    key = uuid.uuid4().hex
    calls = [{"name": "echo", "args": {"key": key, "value": str(n)}} for n in range(4)]
    spec = limits_spec(
        {
            "agent": {
                "kind": "agent",
                "model": "m",
                "tools": ["echo"],
                "prompt": "go",
                "output": "answer",
            }
        },
        chain("agent"),
        {"answer": {}},
        models={"m": scripted(*({"tool_calls": [c]} for c in calls), {"content": "done"})},
        tools={"echo": {"function": f"{FNS}:echo"}},
        limits={"max_identical_tool_calls": 1},
    )
    out = await Runner(spec).start()
    assert out["answer"] == "done"
    assert tool_calls()[key] == 4


def _cycle(key: str) -> Any:
    nodes = {
        "call": {
            "kind": "tool",
            "tool": "echo",
            "args": {"key": f"'{key}'", "value": "'x'"},
            "max_visits": 10,
        },
        "ask": {"kind": "approval", "action": "again"},
    }
    edges = [
        {"from": "START", "to": "call"},
        {"from": "call", "to": "ask"},
        {"from": "ask", "route": "result.decision", "to": {"approve": "call"}, "default": "END"},
    ]
    return limits_spec(
        nodes,
        edges,
        {},
        tools={"echo": {"function": f"{FNS}:echo"}},
        limits={"max_identical_tool_calls": 2},
    )


async def test_the_count_survives_resume() -> None:
    key = uuid.uuid4().hex
    runner = Runner(_cycle(key))
    await runner.start()
    await runner.resume({"decision": "approve"})
    checkpoint = await runner.saver.aget_tuple(runner.config)
    assert checkpoint is not None
    assert list(checkpoint.checkpoint["channel_values"][TOOL_CALLS].values()) == [2]
    with pytest.raises(NodeError, match=r"node 'call': loop detected: tool 'echo' called 3 times"):
        await runner.resume({"decision": "approve"})
    assert tool_calls()[key] == 2


async def test_no_limit_no_counting() -> None:
    key = uuid.uuid4().hex
    spec = limits_spec(
        {"call": {"kind": "tool", "tool": "echo", "args": {"key": f"'{key}'"}, "output": "out"}},
        chain("call"),
        {"out": {}},
        tools={"echo": {"function": f"{FNS}:echo"}},
    )
    runner = Runner(spec)
    await runner.start()
    assert TOOL_CALLS not in runner.graph.channels
