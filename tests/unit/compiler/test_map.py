"""map: partial success, min_success, item timeout, concurrency, errors field."""

from __future__ import annotations

from typing import Any

import pytest

from plait.engine.errors import NodeError
from tests.unit.compiler.helpers import Runner, chain, make_spec, run

PROCESS = "plait_compiler_fns:process"


def _map(result: str | None = None, **options: Any) -> Any:
    do: dict[str, Any] = {"kind": "python", "function": PROCESS, "args": {"x": "item"}}
    if result is not None:
        do["result"] = result
    node = {
        "kind": "map",
        "items": "state.items",
        "do": do,
        "output": "results",
        "errors": "failed",
        **options,
    }
    return make_spec(
        {"m": node}, chain("m"), {"items": {}, "results": {}, "failed": {"default": []}}
    )


async def test_map_returns_item_results_in_order() -> None:
    out = await run(_map(concurrency=2), {"items": [3, 1, 2]})
    assert out["results"] == [9, 1, 4]
    assert out["failed"] == []


async def test_map_records_failures_and_timeouts_and_keeps_partial_results() -> None:
    out = await run(_map(item_timeout="100ms", min_success=2), {"items": [2, "slow", 3, "bad"]})
    assert out["results"] == [4, 9]
    assert out["failed"] == [
        {"item": "slow", "index": 1, "error": "timed out after 0.1s"},
        {"item": "bad", "index": 3, "error": "ValueError: bad item"},
    ]


async def test_map_fails_below_min_success_by_default_all() -> None:
    with pytest.raises(NodeError, match=r"node 'm': only 1 of 2 items succeeded \(min_success=2\)"):
        await run(_map(), {"items": [1, "bad"]})
    with pytest.raises(NodeError, match=r"only 1 of 3 items succeeded \(min_success=2\); item 1"):
        await run(_map(min_success=2, item_timeout=0.05), {"items": [1, "slow", "bad"]})


async def test_map_item_result_expression_shapes_each_contribution() -> None:
    spec = _map(result="{'in': item, 'out': result, 'at': index}")
    out = await run(spec, {"items": [2]})
    assert out["results"] == [{"in": 2, "out": 4, "at": 0}]


async def test_map_items_must_be_a_list() -> None:
    with pytest.raises(NodeError, match=r"`items` must give a list, got str"):
        await run(_map(), {"items": "abc"})


async def test_map_streams_item_progress_as_custom_events() -> None:
    runner = Runner(_map(min_success=1, item_timeout=0.05))
    events = [
        event
        async for event in runner.graph.astream(
            {"items": [1, "bad"]}, runner.config, stream_mode="custom"
        )
    ]
    items = [event for event in events if event["plait"] == "map_item"]
    assert sorted(items, key=lambda e: e["index"]) == [
        {"plait": "map_item", "node": "m", "index": 0, "ok": True},
        {"plait": "map_item", "node": "m", "index": 1, "ok": False},
    ]
    # Then what the run's state reads (engine/run/marks.py): the items the map lost.
    [lost] = [event for event in events if event["plait"] == "map_lost"]
    assert (lost["node"], lost["items"], lost["lost"]) == ("m", 2, 1)
