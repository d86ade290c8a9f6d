"""The cassette a replay plays from, and how a replay's ending is compared with the recording's."""

from __future__ import annotations

import pytest

from plait.engine.run.replay import Ending, Recording, RecordingError, compare
from plait.engine.tools.cassette import Cassette, Diverged, RecordedModelCall, RecordedToolCall


def _cassette() -> Cassette:
    return Cassette(
        [
            RecordedModelCall("plan", "big", {"content": "first", "usage": {"input_tokens": 3}}),
            RecordedModelCall(
                "plan",
                "big",
                {"content": "", "tool_calls": [{"name": "search", "args": {"q": "x"}, "id": "c1"}]},
            ),
            RecordedModelCall("write", "small", {"content": "done"}),
        ],
        [
            RecordedToolCall("plan", "search", {"q": "x"}, {"hits": 1}),
            RecordedToolCall("plan", "search", {"q": "y"}, {"hits": 2}),
        ],
    )


def test_replies_come_per_node_in_call_order_and_each_once() -> None:
    cassette = _cassette()

    assert cassette.model_reply("write", "small").content == "done"
    first = cassette.model_reply("plan", "big")
    second = cassette.model_reply("plan", "big")

    assert first.content == "first" and first.usage_metadata == {
        "input_tokens": 3,
        "output_tokens": 0,
        "total_tokens": 3,
    }
    assert second.tool_calls == [
        {"name": "search", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}
    ]
    with pytest.raises(
        Diverged,
        match=r"node 'plan': diverged from the recording: it asked "
        r"'big' for reply 3 in this node; the recorded run had 2 model call\(s\) here",
    ):
        cassette.model_reply("plan", "big")


def test_tool_results_match_node_tool_and_arguments() -> None:
    cassette = _cassette()

    assert cassette.tool_result("plan", "search", {"q": "y"}) == {"hits": 2}
    assert cassette.tool_result("plan", "search", {"q": "x"}) == {"hits": 1}
    assert cassette.unused() == (3, 0)
    with pytest.raises(
        Diverged,
        match=r"it called tool 'search' with \{'q': 'x'\}; the recorded "
        r"run made no such call here",
    ):
        cassette.tool_result("plan", "search", {"q": "x"})  # used once already


def test_a_call_with_other_arguments_says_what_was_recorded() -> None:
    with pytest.raises(
        Diverged, match=r"with \{'q': 'z'\}; the recording called it with \{'q': 'x'\}"
    ):
        _cassette().tool_result("plan", "search", {"q": "z"})


def _ending(**changes: object) -> Ending:
    fields: dict[str, object] = {
        "outcome": "success",
        "steps": ["a", "b", "c"],
        "state": {"x": 1, "y": 2},
        "usage": {"cost": 0.5, "total_tokens": 100},
    }
    fields.update(changes)
    return Ending(**fields)  # type: ignore[arg-type]


def test_the_same_ending_has_no_changes() -> None:
    assert compare(_ending(), _ending()) == ([], False)


def test_a_changed_path_or_outcome_fails_and_says_where() -> None:
    changes, failed = compare(_ending(), _ending(steps=["a", "d"], outcome="failed"))

    assert failed
    assert "outcome: success -> failed" in changes
    assert "path: step 2 was b, now d (recorded a > b > c; now a > d)" in changes


def test_cost_tokens_and_state_changes_are_shown_without_failing() -> None:
    later = _ending(state={"x": 1, "y": 3, "z": 0}, usage={"cost": 0.75, "total_tokens": 100})

    changes, failed = compare(_ending(), later)

    assert not failed
    assert changes == ["cost: 0.5 -> 0.75 (+50%)", "state: y, z changed"]


def test_a_file_that_is_not_a_recording_is_refused() -> None:
    with pytest.raises(RecordingError, match="its `format` must be 'plait-recording/v1'"):
        Recording.from_json({"graph": "x"})
    with pytest.raises(RecordingError, match="missing or malformed"):
        Recording.from_json({"format": "plait-recording/v1", "graph": "x"})
