"""Run events: JSON form and the one-line update summary."""

from __future__ import annotations

import json

from plait.engine.run.events import (
    SUMMARY_VALUE_CHARS,
    Interrupted,
    NodeFinished,
    summarize_update,
)


def test_to_dict_is_json_with_the_event_type_first() -> None:
    event = NodeFinished(node="a", task_id="t", update={"x": (1, 2)}, summary="x=[2 items]")
    data = event.to_dict()
    assert next(iter(data)) == "event"
    assert data == {
        "event": "node_finished",
        "node": "a",
        "task_id": "t",
        "update": {"x": [1, 2]},
        "summary": "x=[2 items]",
        "path": [],
    }
    json.dumps(data)
    assert Interrupted(node=None, interrupt_id="i", payload=None).to_dict()["event"] == "interrupt"


def test_summary_shortens_values() -> None:
    assert summarize_update({}) == "no changes"
    assert summarize_update(None) == "no changes"
    assert summarize_update({"a": 1, "b": "two", "c": [1, 2, 3], "d": [0]}) == (
        'a=1, b="two", c=[3 items], d=[1 item]'
    )
    long = summarize_update({"text": "word " * 100})
    value = long.removeprefix("text=")
    assert len(value) == SUMMARY_VALUE_CHARS and value.endswith("…")
    assert summarize_update({"t": "a\nb"}) == 't="a\\nb"'
