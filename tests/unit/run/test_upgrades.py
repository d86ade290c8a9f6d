"""Moving a parked thread's checkpoint to a new version (decision 95), on an in-memory
checkpointer: a route edge before the approval, both nodes renamed, the state mapped;
the thread resumes by the new interrupt id and finishes on the new version."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.types import Command

from plait.engine.run.upgrades import UpgradeRefused, upgrade_checkpoint
from plait.engine.spec.document import LoadedSpec
from tests.unit.compiler.helpers import Runner, make_spec

STATE_V1 = {"amount": {"type": "integer"}, "decision": {"type": "object"}}
STATE_V2 = {
    "amount_cents": {"type": "integer"},
    "decision": {"type": "object"},
    "approved": {"type": "boolean"},
}


def _version_1() -> LoadedSpec:
    return make_spec(
        {
            "classify": {"kind": "router", "label": "state.amount > 10 ? 'big' : 'small'"},
            "check": {"kind": "approval", "action": "refund", "writes": {"decision": "result"}},
        },
        [
            {"from": "START", "to": "classify"},
            {"from": "classify", "route": "result", "to": {"big": "check", "small": "END"}},
            {"from": "check", "to": "END"},
        ],
        STATE_V1,
        name="refunds",
    )


def _version_2(nodes: dict[str, str]) -> LoadedSpec:
    return make_spec(
        {
            "triage": {"kind": "router", "label": "state.amount_cents > 1000 ? 'big' : 'small'"},
            "confirm": {
                "kind": "approval",
                "action": "refund",
                "writes": {"approved": "result.decision == 'approve'"},
            },
        },
        [
            {"from": "START", "to": "triage"},
            {"from": "triage", "route": "result", "to": {"big": "confirm", "small": "END"}},
            {"from": "confirm", "to": "END"},
        ],
        STATE_V2,
        name="refunds",
        version="1.1.0",
        migrations=[
            {"from": "1.0.0", "state": {"amount_cents": "state.amount * 100"}, "nodes": nodes}
        ],
    )


async def _upgrade(old: Runner, new: LoadedSpec) -> tuple[Any, Any]:
    graph = Runner(new).compiled.bind(old.saver)
    upgraded = await upgrade_checkpoint(
        old.saver,
        old.graph,
        graph,
        old.config,  # type: ignore[arg-type]
        old_spec=old.compiled.loaded.spec,
        new_spec=new.spec,
        migration=new.spec.spec.migrations[0],
        metadata={"plait_upgrade": {"from": "1.0.0", "to": "1.1.0"}},
    )
    return upgraded, graph


async def test_a_parked_thread_moves_and_resumes_by_its_new_interrupt_id() -> None:
    old = Runner(_version_1())
    parked = await old.start({"amount": 50})
    [old_interrupt] = parked["__interrupt__"]

    upgraded, graph = await _upgrade(old, _version_2({"classify": "triage", "check": "confirm"}))
    assert upgraded.written == ("amount_cents",)
    [(old_id, (new_id, node))] = upgraded.interrupts.items()
    assert (old_id, node) == (old_interrupt.id, "confirm")

    snapshot = await graph.aget_state(old.config)
    assert snapshot.next == ("confirm",)
    assert snapshot.values["amount_cents"] == 5000
    assert "amount" not in snapshot.values
    [interrupt] = snapshot.interrupts
    assert interrupt.id == new_id
    assert snapshot.metadata["plait_upgrade"] == {"from": "1.0.0", "to": "1.1.0"}

    done = await graph.ainvoke(Command(resume={new_id: {"decision": "approve"}}), old.config)
    assert done["approved"] is True
    assert (await graph.aget_state(old.config)).next == ()


async def test_a_waiting_node_without_a_counterpart_is_refused_before_anything_is_written() -> None:
    old = Runner(_version_1())
    await old.start({"amount": 50})
    before = await old.saver.aget_tuple(old.config)  # type: ignore[arg-type]
    with pytest.raises(UpgradeRefused, match=r"`nodes: \{check: <new node id>\}`") as refused:
        await _upgrade(old, _version_2({"classify": "triage"}))
    assert refused.value.kind == "no-node"
    after = await old.saver.aget_tuple(old.config)  # type: ignore[arg-type]
    assert before is not None and after is not None
    assert after.config == before.config
