"""High-risk tools wait for an approval ticket; the decision is audited."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from plait.engine.errors import NodeError
from plait.engine.spec.models import ToolDef
from plait.engine.tools.python_tools import load_python_tool
from plait.engine.tools.risk import is_high_risk
from tests.unit.governance.tools.helpers import FIXTURES, FNS, Run, make_spec

TOOLS = {"refund": {"function": f"{FNS}:refund", "risk": "high"}}


def _tool_node_spec() -> Any:
    return make_spec(
        {
            "state": {"order": {}, "result": {}},
            "tools": TOOLS,
            "nodes": {
                "pay": {
                    "kind": "tool",
                    "tool": "refund",
                    "args": {"order": "state.order", "amount": "30"},
                    "output": "result",
                }
            },
            "edges": [{"from": "START", "to": "pay"}, {"from": "pay", "to": "END"}],
        }
    )


async def test_a_high_risk_tool_waits_for_approval_then_runs_once(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    run = Run(_tool_node_spec())
    await run.start({"order": "A1"})

    assert calls == []
    assert await run.interrupts() == [
        {
            "kind": "approval",
            "node": "pay",
            "action": "refund",
            "arguments": {"order": "A1", "amount": 30},
            "reason": "high-risk tool",
        }
    ]
    state = await run.resume({"decision": "approve", "comment": "ok"})

    assert state["result"] == {"refunded": 30, "order": "A1"}
    assert calls == [("refund", {"order": "A1", "amount": 30})]
    (decision,) = run.audited("approval")
    assert decision.tool == "refund" and decision.actor == "reviewer"
    assert decision.detail["decision"] == "approve"
    assert decision.detail["comment"] == "ok"
    assert [r.detail["status"] for r in run.audited("tool_call")] == ["ok"]
    assert len(run.results.records) == 1  # recorded under its idempotency key


async def test_an_edit_calls_the_tool_with_the_edited_arguments(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    run = Run(_tool_node_spec())
    await run.start({"order": "A1"})
    state = await run.resume({"decision": "edit", "arguments": {"order": "A1", "amount": 10}})

    assert state["result"] == {"refunded": 10, "order": "A1"}
    assert calls == [("refund", {"order": "A1", "amount": 10})]
    assert run.audited("approval")[0].detail["arguments"] == {"order": "A1", "amount": 10}


async def test_a_rejection_fails_the_tool_node_without_calling_it(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    run = Run(_tool_node_spec())
    await run.start({"order": "A1"})
    with pytest.raises(NodeError, match=r"node 'pay': .*'refund' was rejected: too much"):
        await run.resume({"decision": "reject", "comment": "too much"})

    assert calls == []
    assert run.audited("approval")[0].detail["decision"] == "reject"
    assert run.audited("tool_call") == []


async def test_an_agent_gets_a_rejection_as_the_tools_answer(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    script = [
        {"tool_calls": [{"name": "refund", "args": {"order": "B2", "amount": 99}, "id": "c1"}]},
        {"content": "could not refund"},
    ]
    run = Run(
        make_spec(
            {
                "state": {"answer": {}, "conversation": {"reducer": "add_messages"}},
                "models": {"m": {"provider": "scripted", "script": script}},
                "tools": TOOLS,
                "nodes": {
                    "agent": {
                        "kind": "agent",
                        "model": "m",
                        "tools": ["refund"],
                        "prompt": "Refund B2",
                        "messages": "conversation",
                        "output": "answer",
                    }
                },
                "edges": [{"from": "START", "to": "agent"}, {"from": "agent", "to": "END"}],
            }
        )
    )
    await run.start({})
    assert [p["action"] for p in await run.interrupts()] == ["refund"]
    state = await run.resume({"decision": "reject"})

    assert state["answer"] == "could not refund"
    answer = next(m for m in state["conversation"] if isinstance(m, ToolMessage))
    assert answer.status == "error"
    assert "'refund' was rejected" in answer.content
    assert calls == []


def test_only_tools_declared_high_risk_are_gated() -> None:
    high = ToolDef.model_validate(TOOLS["refund"])
    low = ToolDef.model_validate({"function": f"{FNS}:refund"})
    assert low.risk == "low"
    assert is_high_risk(load_python_tool("refund", high, FIXTURES))
    assert not is_high_risk(load_python_tool("refund", low, FIXTURES))


def _on_reject_spec() -> Any:
    return make_spec(
        {
            "state": {"order": {}, "result": {}, "path": {"reducer": "append"}},
            "tools": TOOLS,
            "nodes": {
                "pay": {
                    "kind": "tool",
                    "tool": "refund",
                    "args": {"order": "state.order", "amount": "30"},
                    "output": "result",
                    "on_reject": "apologise",
                },
                "confirm": {"kind": "router", "label": "'x'", "writes": {"path": "'confirm'"}},
                "apologise": {"kind": "router", "label": "'x'", "writes": {"path": "'apologise'"}},
            },
            "edges": [
                {"from": "START", "to": "pay"},
                {"from": "pay", "to": "confirm"},
                {"from": "confirm", "to": "END"},
                {"from": "apologise", "to": "END"},
            ],
        }
    )


async def test_on_reject_continues_at_the_named_node(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    run = Run(_on_reject_spec())
    await run.start({"order": "A1"})
    state = await run.resume({"decision": "reject", "comment": "no"})

    assert state["path"] == ["apologise"]
    assert state["result"] == {"rejected": True, "tool": "refund", "comment": "no"}
    assert calls == []


async def test_on_reject_leaves_an_approved_call_on_its_path(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    run = Run(_on_reject_spec())
    await run.start({"order": "A1"})
    state = await run.resume({"decision": "approve"})

    assert state["path"] == ["confirm"]
    assert calls == [("refund", {"order": "A1", "amount": 30})]
