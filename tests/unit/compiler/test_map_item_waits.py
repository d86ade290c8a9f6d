"""Something in a map item that would wait (an approval, a remote agent asking for input, a
high-risk tool) fails the item with an error that names the map, the item, the node's path
and what to do, not with LangGraph's GraphInterrupt. Outside map items it parks as before."""

from __future__ import annotations

from typing import Any

import pytest

from plait.engine.errors import NodeError
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.registry import SpecRegistry
from plait.engine.tools.cassette import Cassette, RecordedA2aCall, RecordedA2aTurn, playing
from tests.unit.compiler.helpers import Runner, chain, make_spec

FNS = "plait_compiler_fns"
NOWHERE = "http://127.0.0.1:9"


def _child(nodes: dict[str, Any], name: str = "desk") -> LoadedSpec:
    return make_spec(
        nodes,
        chain(*nodes),
        {"claim": {}, "done": {}},
        name=name,
        output=["done"],
    )


def _approval() -> dict[str, Any]:
    return {"approve": {"kind": "approval", "action": "pay_claim", "output": "done"}}


def _claims(**map_fields: Any) -> LoadedSpec:
    return make_spec(
        {
            "each": {
                "kind": "map",
                "items": "state.claims",
                "do": {"kind": "subgraph", "ref": "desk@1.0.0", "input": {"claim": "item"}},
                "output": "results",
                **map_fields,
            }
        },
        chain("each"),
        {"claims": {}, "results": {}, "failed": {}},
    )


FIX = (
    "move the approval node out of the map (before or after it), or run that work once per "
    "item with a `subgraph` node in a cycle (one item per visit, bounded by `max_visits`) "
    "instead of a `map`"
)


async def test_an_approval_in_a_map_items_subgraph_fails_the_map_saying_where_and_what_to_do() -> (
    None
):
    runner = Runner(_claims(), SpecRegistry([_child(_approval())]))

    with pytest.raises(NodeError) as raised:
        await runner.start({"claims": ["taxi", "dinner"]})

    assert str(raised.value) == (
        "node 'each': only 0 of 2 items succeeded (min_success=2); item 0 failed: node "
        "'each[0]/approve': this approval node asks for a decision on 'pay_claim', but it runs "
        "inside item 0 of map 'each', which cannot wait: the map runs its items within its one "
        f"step, with no checkpoint to resume an item from (see `map` in "
        f"docs/spec-language.md); {FIX}"
    )
    assert "GraphInterrupt" not in str(raised.value)


async def test_each_lost_item_says_which_it_was_two_subgraphs_down() -> None:
    office = _child({"inner": {"kind": "subgraph", "ref": "inner@1.0.0", "output": "done"}})
    inner = _child(_approval(), name="inner")
    runner = Runner(_claims(min_success=0, errors="failed"), SpecRegistry([office, inner]))

    out = await runner.start({"claims": ["taxi", "dinner"]})

    assert out["results"] == []
    assert [failure["index"] for failure in out["failed"]] == [0, 1]
    for index, failure in enumerate(out["failed"]):
        assert failure["error"].startswith(
            f"node 'each[{index}]/inner/approve': this approval node asks for a decision on "
            f"'pay_claim', but it runs inside item {index} of map 'each', which cannot wait"
        )


async def test_a_remote_agent_asking_in_a_map_item_says_what_it_asked() -> None:
    child = _child({"file_claim": {"kind": "a2a", "url": NOWHERE, "message": "{{ state.claim }}"}})
    asked = {
        "id": "t-1",
        "contextId": "c-1",
        "status": {
            "state": "TASK_STATE_INPUT_REQUIRED",
            "message": {
                "messageId": "m",
                "role": "ROLE_AGENT",
                "parts": [{"text": "Cost centre?"}],
            },
        },
    }
    recorded = RecordedA2aCall(
        "each[0]/file_claim",
        {"agent": NOWHERE, "message": "taxi", "data": None},
        [RecordedA2aTurn(None, asked)],
    )
    runner = Runner(_claims(), SpecRegistry([child]))

    with playing(Cassette([], [], [recorded])), pytest.raises(NodeError) as raised:
        await runner.start({"claims": ["taxi"]})

    assert (
        "item 0 failed: node 'each[0]/file_claim': this a2a node's remote agent asks for input "
        "('Cost centre?'), but it runs inside item 0 of map 'each', which cannot wait"
    ) in str(raised.value)
    assert "have the remote agent answer without asking" in str(raised.value)


async def test_a_high_risk_tool_called_by_a_map_item_itself_names_the_item() -> None:
    spec = make_spec(
        {
            "each": {
                "kind": "map",
                "items": "state.claims",
                "do": {"kind": "tool", "tool": "pay", "args": {"query": "item"}},
                "output": "results",
            }
        },
        chain("each"),
        {"claims": {}, "results": {}},
        tools={"pay": {"function": f"{FNS}:lookup", "risk": "high"}},
    )

    with pytest.raises(NodeError) as raised:
        await Runner(spec).start({"claims": ["taxi"]})

    assert (
        "item 0 failed: node 'each[0]': this tool node asks for a decision on 'pay', but it "
        "runs inside item 0 of map 'each', which cannot wait"
    ) in str(raised.value)
    assert "call it from a node outside the map" in str(raised.value)


async def test_an_approval_in_a_subgraph_outside_maps_still_parks_the_run() -> None:
    spec = make_spec(
        {"office": {"kind": "subgraph", "ref": "desk@1.0.0", "output": "results"}},
        chain("office"),
        {"claim": {}, "results": {}},
    )
    runner = Runner(spec, SpecRegistry([_child(_approval())]))

    out = await runner.start({"claim": "taxi"})

    assert "__interrupt__" in out
    assert out["__interrupt__"][0].value["action"] == "pay_claim"
