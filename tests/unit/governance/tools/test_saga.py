"""Compensation: completed steps are undone in reverse order when a later step fails."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from plait.engine.errors import NodeError
from tests.unit.governance.tools.helpers import FNS, Run, make_spec


def _spec(undo: str = "undo_charge", ship: str = "ship", **ship_node: Any) -> Any:
    return make_spec(
        {
            "state": {"item": {}, "reservation": {}},
            "tools": {
                "reserve": {
                    "function": f"{FNS}:reserve",
                    "compensate": {"tool": "release", "args": {"reservation": "result.id"}},
                },
                "release": {"function": f"{FNS}:release"},
            },
            "nodes": {
                "book": {
                    "kind": "tool",
                    "tool": "reserve",
                    "args": {"item": "state.item"},
                    "output": "reservation",
                },
                "pay": {
                    "kind": "python",
                    "function": f"{FNS}:charge",
                    "compensate": {"function": f"{FNS}:{undo}"},
                },
                "send": {"kind": "python", "function": f"{FNS}:{ship}", **ship_node},
            },
            "edges": [
                {"from": "START", "to": "book"},
                {"from": "book", "to": "pay"},
                {"from": "pay", "to": "send"},
                {"from": "send", "to": "END"},
            ],
        }
    )


def _compensations(run: Run) -> list[tuple[str, str]]:
    return [(e["step"], e["status"]) for e in run.events if e.get("plait") == "compensation"]


async def test_a_failure_undoes_completed_steps_in_reverse_order(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    run = Run(_spec())
    with pytest.raises(NodeError, match=r"node 'send': ValueError: no courier") as failure:
        await run.start({"item": "lamp"})

    assert "compensation failed" not in str(failure.value)
    assert calls == [
        ("reserve", {"item": "lamp"}),
        ("charge", {}),
        ("ship", {}),
        ("undo_charge", {"charge": "ch-1"}),
        ("release", {"reservation": "res-lamp"}),
    ]
    assert _compensations(run) == [("pay", "ok"), ("book.reserve", "ok")]
    assert [r.detail["step"] for r in run.audited("compensation")] == ["pay", "book.reserve"]


async def test_a_step_timeout_undoes_completed_steps_too(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    run = Run(_spec(ship="ship_slow", timeout="100ms"))
    with pytest.raises(NodeError, match=r"node 'send': the step timed out after 0.1s"):
        await run.start({"item": "lamp"})

    assert calls[-2:] == [
        ("undo_charge", {"charge": "ch-1"}),
        ("release", {"reservation": "res-lamp"}),
    ]
    assert _compensations(run) == [("pay", "ok"), ("book.reserve", "ok")]


async def test_a_failed_compensation_is_reported_for_manual_action_and_the_rest_still_run(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    run = Run(_spec(undo="undo_charge_broken"))
    with pytest.raises(NodeError) as failure:
        await run.start({"item": "lamp"})

    message = str(failure.value)
    assert message.startswith("node 'send': ValueError: no courier; compensation failed")
    assert "manual action needed: pay: RuntimeError: payment provider down" in message
    assert ("release", {"reservation": "res-lamp"}) in calls  # still ran after the failure
    assert _compensations(run) == [("pay", "failed"), ("book.reserve", "ok")]
    broken = run.audited("compensation")[0]
    assert broken.detail["manual_action"] is True
    assert broken.detail["error"] == "RuntimeError: payment provider down"


async def test_a_failure_that_will_be_retried_compensates_nothing(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    sys.modules[FNS].FLAKY.clear()
    retry = {"max_attempts": 2, "initial_interval": 0.001, "jitter": False}
    run = Run(_spec(ship="ship_flaky", retry=retry))
    await run.start({"item": "lamp"})

    assert [name for name, _ in calls] == ["reserve", "charge", "ship_flaky", "ship_flaky"]
    assert _compensations(run) == []


async def test_tool_calls_the_failing_node_completed_are_undone_too(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    script = [
        {"tool_calls": [{"name": "reserve", "args": {"item": "desk"}, "id": "c1"}]},
        {"tool_calls": [{"name": "reserve", "args": {"item": "chair"}, "id": "c2"}]},
    ]
    run = Run(
        make_spec(
            {
                "models": {"m": {"provider": "scripted", "script": script}},
                "tools": {
                    "reserve": {
                        "function": f"{FNS}:reserve",
                        "compensate": {"tool": "release", "args": {"reservation": "result.id"}},
                    },
                    "release": {"function": f"{FNS}:release"},
                },
                "nodes": {
                    "agent": {
                        "kind": "agent",
                        "model": "m",
                        "tools": ["reserve"],
                        "prompt": "Furnish",
                        "max_iterations": 2,
                    }
                },
                "edges": [{"from": "START", "to": "agent"}, {"from": "agent", "to": "END"}],
            }
        )
    )
    with pytest.raises(NodeError, match="max_iterations=2"):
        await run.start({})

    assert calls[-2:] == [
        ("release", {"reservation": "res-chair"}),
        ("release", {"reservation": "res-desk"}),
    ]


async def test_a_rejected_high_risk_call_compensates_what_came_before(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    spec = _spec()
    body = spec.data["spec"]
    body["tools"]["refund"] = {"function": f"{FNS}:refund", "risk": "high"}
    body["nodes"]["send"] = {
        "kind": "tool",
        "tool": "refund",
        "args": {"order": "'o'", "amount": "1"},
    }
    run = Run(make_spec(body))
    await run.start({"item": "lamp"})
    with pytest.raises(NodeError, match="was rejected"):
        await run.resume({"decision": "reject"})

    assert _compensations(run) == [("pay", "ok"), ("book.reserve", "ok")]
    assert ("refund", {"order": "o", "amount": 1}) not in calls


async def test_without_compensate_there_is_no_saga_channel() -> None:
    spec = make_spec(
        {
            "nodes": {"pay": {"kind": "python", "function": f"{FNS}:charge"}},
            "edges": [{"from": "START", "to": "pay"}, {"from": "pay", "to": "END"}],
        }
    )
    run = Run(spec)
    assert "__saga" not in run.graph.channels
