"""Non-idempotent tools: a call that began and never recorded its end is never repeated blindly.

The process "dies" (a ``BaseException`` no node catches) right after the
effect or right before it, with the intent recorded and no result; the thread
is then continued, as a worker taking the run over would.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from plait.engine.errors import NodeError
from plait.engine.spec.models import ToolDef
from plait.engine.tools.idempotency import InMemoryToolResultStore
from plait.engine.tools.in_doubt import CallUnsettled, InDoubtRejected, interrupt_id
from plait.engine.tools.python_tools import import_function, load_python_tool
from tests.unit.governance.tools.helpers import FIXTURES, Run, make_spec

FNS = "plait_in_doubt_fns"


@pytest.fixture
def fns() -> ModuleType:
    """The fixture tools' module (as the compiler imports it), its logs emptied."""
    import_function(f"{FNS}:send", FIXTURES)
    module = sys.modules[FNS]
    for log in (module.EFFECTS, module.DIE_AFTER, module.DIE_BEFORE, module.RECONCILED):
        log.clear()
    return module


def _spec(reconcile: str | None = None, **node: Any) -> Any:
    tool: dict[str, Any] = {"function": f"{FNS}:send", "idempotent": False}
    if reconcile is not None:
        tool["reconcile"] = f"{FNS}:{reconcile}"
    return make_spec(
        {
            "state": {"order": {}, "result": {}},
            "tools": {"send": tool},
            "nodes": {
                "ship": {
                    "kind": "tool",
                    "tool": "send",
                    "args": {"order": "state.order"},
                    "output": "result",
                    **node,
                }
            },
            "edges": [{"from": "START", "to": "ship"}, {"from": "ship", "to": "END"}],
        }
    )


async def _died(run: Run, fns: ModuleType, payload: dict[str, Any]) -> None:
    with pytest.raises(fns.Crash):
        await run.start(payload)


async def _pending(run: Run) -> list[tuple[str, Any]]:
    snapshot = await run.graph.aget_state(run.config)
    return [(i.id, i.value) for task in snapshot.tasks for i in task.interrupts]


def _in_doubt_events(run: Run) -> list[str]:
    return [e["outcome"] for e in run.events if e.get("plait") == "tool_in_doubt"]


async def test_a_call_that_died_after_its_effect_parks_on_an_approval(fns: ModuleType) -> None:
    run = Run(_spec())
    fns.DIE_AFTER.add("o1")
    await _died(run, fns, {"order": "o1"})
    assert fns.EFFECTS == ["o1"]
    (key,) = run.results.intents
    assert run.results.records == {}

    await run.go(None)  # the run taken over: the call is in doubt

    assert fns.EFFECTS == ["o1"], "a call in doubt must not run again by itself"
    ((asked, payload),) = await _pending(run)
    facts = payload.pop("in_doubt")
    reason = payload.pop("reason")
    assert payload == {
        "kind": "approval",
        "node": "ship",
        "action": "send",
        "arguments": {"order": "o1"},
        "expires_at": None,
        "on_expire": "reject",
    }
    assert facts["key"] == key and facts["attempts"] == 1
    assert facts["began_at"] == run.results.intents[key].began_at.isoformat()
    assert reason.startswith("this call may already have happened")
    assert key in reason and facts["began_at"] in reason
    assert asked == interrupt_id(key, 1)
    assert _in_doubt_events(run) == ["asked"]


async def test_approve_runs_it_again_once(fns: ModuleType) -> None:
    run = Run(_spec())
    fns.DIE_AFTER.add("o1")
    await _died(run, fns, {"order": "o1"})
    await run.go(None)
    ((asked, _),) = await _pending(run)

    state = await run.go(Command(resume={asked: {"decision": "approve", "comment": "not sent"}}))

    assert fns.EFFECTS == ["o1", "o1"]
    assert state["result"] == {"sent": "o1", "n": 2}
    (decision,) = run.audited("approval")
    assert decision.tool == "send" and decision.detail["decision"] == "approve"
    assert decision.detail["in_doubt"]["attempts"] == 1
    assert _in_doubt_events(run) == ["asked", "approved"]


async def test_reject_fails_the_step_without_running_it(fns: ModuleType) -> None:
    run = Run(_spec())
    fns.DIE_AFTER.add("o1")
    await _died(run, fns, {"order": "o1"})
    await run.go(None)
    ((asked, _),) = await _pending(run)

    with pytest.raises(InDoubtRejected, match="in doubt and its re-run was rejected: sent"):
        await run.go(Command(resume={asked: {"decision": "reject", "comment": "sent"}}))
    assert fns.EFFECTS == ["o1"]


async def test_edit_gives_the_result_to_use_and_records_it(fns: ModuleType) -> None:
    run = Run(_spec())
    fns.DIE_AFTER.add("o1")
    await _died(run, fns, {"order": "o1"})
    await run.go(None)
    ((asked, _),) = await _pending(run)
    given = {"sent": "o1", "n": 1, "checked": "by hand"}

    state = await run.go(Command(resume={asked: {"decision": "edit", "arguments": given}}))

    assert fns.EFFECTS == ["o1"]
    assert state["result"] == given
    (key,) = run.results.records
    assert run.results.records[key].value == given
    tool_calls = [e for e in run.events if e.get("plait") == "tool_call"]
    assert (tool_calls[-1]["status"], tool_calls[-1]["reused"]) == ("ok", True)


async def test_an_approved_rerun_that_dies_too_asks_again(fns: ModuleType) -> None:
    """The re-sent command of the same run (a worker died during the approved re-run) is stale."""
    run = Run(_spec())
    fns.DIE_AFTER.add("o1")
    await _died(run, fns, {"order": "o1"})
    await run.go(None)
    ((asked, _),) = await _pending(run)
    command = Command(resume={asked: {"decision": "approve"}})
    run.config["configurable"]["run_id"] = "r2"  # the resume run

    fns.DIE_AFTER.add("o1")
    with pytest.raises(fns.Crash):
        await run.go(command)
    assert fns.EFFECTS == ["o1", "o1"]

    await run.go(command)  # the resume run taken over: its command is sent again

    assert fns.EFFECTS == ["o1", "o1"], "one approval lets one more attempt begin, no more"
    ((again, payload),) = await _pending(run)
    assert again != asked and payload["in_doubt"]["attempts"] == 2
    state = await run.go(Command(resume={again: {"decision": "edit", "arguments": {"ok": 1}}}))
    assert state["result"] == {"ok": 1} and fns.EFFECTS == ["o1", "o1"]


async def test_a_resume_value_without_an_id_answers_once_per_run(fns: ModuleType) -> None:
    run = Run(_spec())
    fns.DIE_AFTER.add("o1")
    await _died(run, fns, {"order": "o1"})
    await run.go(None)
    run.config["configurable"]["run_id"] = "r2"
    fns.DIE_AFTER.add("o1")
    with pytest.raises(fns.Crash):
        await run.resume({"decision": "approve"})

    await run.resume({"decision": "approve"})  # the same run's command, sent again

    assert fns.EFFECTS == ["o1", "o1"]
    ((_, payload),) = await _pending(run)
    assert payload["in_doubt"]["attempts"] == 2
    run.config["configurable"]["run_id"] = "r3"  # a new decision, a new run
    state = await run.resume({"decision": "approve"})
    assert fns.EFFECTS == ["o1", "o1", "o1"] and state["result"]["n"] == 3


@pytest.mark.parametrize("reconcile", ["reconcile_send", "reconcile_send_async"])
async def test_reconcile_returns_the_result_of_a_call_that_happened(
    fns: ModuleType, reconcile: str
) -> None:
    run = Run(_spec(reconcile))
    fns.DIE_AFTER.add("o1")
    await _died(run, fns, {"order": "o1"})

    state = await run.go(None)

    assert fns.EFFECTS == ["o1"]
    assert state["result"] == {"sent": "o1", "reconciled": True}
    (key,) = run.results.intents
    assert [({"order": "o1"}, key)] == fns.RECONCILED
    assert run.results.records[key].value == state["result"]
    assert _in_doubt_events(run) == ["reconciled"]
    assert await _pending(run) == []


async def test_reconcile_lets_a_call_that_did_not_happen_run(fns: ModuleType) -> None:
    run = Run(_spec("reconcile_send"))
    fns.DIE_BEFORE.add("o1")
    await _died(run, fns, {"order": "o1"})
    assert fns.EFFECTS == []

    state = await run.go(None)

    assert fns.EFFECTS == ["o1"]
    assert state["result"] == {"sent": "o1", "n": 1}
    (key,) = run.results.intents
    assert run.results.intents[key].attempts == 2
    assert _in_doubt_events(run) == ["not_happened"]


async def test_a_reconcile_that_answers_nonsense_fails_the_step(fns: ModuleType) -> None:
    run = Run(_spec("reconcile_garbage"))
    fns.DIE_AFTER.add("o1")
    await _died(run, fns, {"order": "o1"})
    with pytest.raises(CallUnsettled, match='reconcile returned "maybe"'):
        await run.go(None)
    assert fns.EFFECTS == ["o1"]


def test_a_reconcile_of_the_wrong_shape_is_refused_when_the_tool_loads() -> None:
    definition = ToolDef(
        function=f"{FNS}:send", idempotent=False, reconcile=f"{FNS}:reconcile_one_argument"
    )
    with pytest.raises(TypeError, match=r"must take two arguments: \(args, key\)"):
        load_python_tool("send", definition, FIXTURES)


async def test_a_first_call_records_its_intent_then_its_result(fns: ModuleType) -> None:
    run = Run(_spec())
    state = await run.start({"order": "o1"})
    assert state["result"] == {"sent": "o1", "n": 1}
    (key,) = run.results.intents
    assert run.results.intents[key].attempts == 1
    assert run.results.records[key].value == state["result"]
    assert _in_doubt_events(run) == []


async def test_a_call_that_parked_its_run_is_not_in_doubt(fns: ModuleType) -> None:
    loaded = make_spec(
        {
            "state": {"order": {}, "result": {}},
            "tools": {"park": {"function": f"{FNS}:park_once", "idempotent": False}},
            "nodes": {
                "ship": {
                    "kind": "tool",
                    "tool": "park",
                    "args": {"order": "state.order"},
                    "output": "result",
                }
            },
            "edges": [{"from": "START", "to": "ship"}, {"from": "ship", "to": "END"}],
        }
    )
    run = Run(loaded)
    await run.start({"order": "o1"})
    (key,) = run.results.intents
    assert run.results.intents[key].parked

    state = await run.resume("done")

    assert state["result"] == {"sent": "o1", "answer": "done"}
    assert fns.EFFECTS == ["o1"] and _in_doubt_events(run) == []


async def test_in_a_map_item_a_call_in_doubt_fails_its_item(fns: ModuleType) -> None:
    loaded = make_spec(
        {
            "state": {"orders": {}, "results": {}, "errors": {}},
            "tools": {"send": {"function": f"{FNS}:send", "idempotent": False}},
            "nodes": {
                "each": {
                    "kind": "map",
                    "items": "state.orders",
                    "do": {"kind": "tool", "tool": "send", "args": {"order": "item"}},
                    "min_success": 1,
                    "errors": "errors",
                    "output": "results",
                }
            },
            "edges": [{"from": "START", "to": "each"}, {"from": "each", "to": "END"}],
        }
    )
    run = Run(loaded)
    fns.DIE_AFTER.add("b")
    with pytest.raises(fns.Crash):
        await run.start({"orders": ["a", "b"]})

    state = await run.go(None)

    assert sorted(fns.EFFECTS) == ["a", "b"]
    (failure,) = state["errors"]
    assert failure["index"] == 1
    assert "may already have happened" in failure["error"]
    assert "give the tool a `reconcile` function" in failure["error"]


def _agent_spec() -> Any:
    return make_spec(
        {
            "state": {"answer": {}},
            "models": {
                "m": {
                    "provider": "scripted",
                    "script": [
                        {"tool_calls": [{"name": "send", "args": {"order": "o1"}}]},
                        {"content": "done"},
                    ],
                }
            },
            "tools": {"send": {"function": f"{FNS}:send", "idempotent": False}},
            "nodes": {
                "agent": {"kind": "agent", "model": "m", "tools": ["send"], "prompt": "Send o1"}
            },
            "edges": [{"from": "START", "to": "agent"}, {"from": "agent", "to": "END"}],
        }
    )


async def test_in_an_agent_a_rejected_call_in_doubt_fails_the_run_not_the_call(
    fns: ModuleType,
) -> None:
    """The model is not told: it could only call again, under a new key, and act twice."""
    run = Run(_agent_spec())
    fns.DIE_AFTER.add("o1")
    await _died(run, fns, {})
    await run.go(None)
    ((asked, payload),) = await _pending(run)
    assert payload["action"] == "send" and payload["arguments"] == {"order": "o1"}

    with pytest.raises(InDoubtRejected):
        await run.go(Command(resume={asked: {"decision": "reject"}}))
    assert fns.EFFECTS == ["o1"]
    assert not any(isinstance(m, ToolMessage) for m in run.models.inputs[-1])


async def test_concurrent_executions_race_to_begin_and_one_wins() -> None:
    store = InMemoryToolResultStore()
    context: dict[str, Any] = {
        "thread_id": "t",
        "run_id": "r",
        "node": "n",
        "tool": "send",
        "args": {},
    }
    assert await store.begin("k", 1, answered_run=None, **context)
    assert not await store.begin("k", 1, answered_run=None, **context)
    assert await store.begin("k", 2, answered_run="r2", **context)
    assert not await store.begin("k", 2, answered_run="r3", **context)
    found = await store.intent("k")
    assert found is not None and (found.attempts, found.answered_run) == (2, "r2")


def test_each_attempt_has_its_own_interrupt_id() -> None:
    ids = {interrupt_id("k", 1), interrupt_id("k", 2), interrupt_id("j", 1)}
    assert len(ids) == 3 and all(len(i) == 32 for i in ids)


async def test_a_failed_call_is_not_retried(fns: ModuleType) -> None:
    """Unchanged: a non-idempotent call that raised fails the step permanently."""
    run = Run(_spec())
    with pytest.raises(NodeError, match="not idempotent"):
        await run.start({"order": {"not": "a string"}})
