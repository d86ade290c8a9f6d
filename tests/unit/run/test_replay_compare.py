"""The cassette a replay plays from, and how a replay's ending is compared with the recording's."""

from __future__ import annotations

import pytest

from plait.engine.run.replay import Ending, Recording, RecordingError, compare, recorded_calls
from plait.engine.tools.cassette import (
    Cassette,
    Diverged,
    RecordedA2aCall,
    RecordedA2aTurn,
    RecordedModelCall,
    RecordedToolCall,
)


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
    assert cassette.unused() == (3, 0, 0)
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


AGENT = "https://desk.example/a2a"
ASKED = {"id": "t-1", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}
DONE = {"id": "t-1", "status": {"state": "TASK_STATE_COMPLETED"}}


def _conversation() -> Cassette:
    """A claim the remote asked about, approved with a comment, then settled."""
    return Cassette(
        [],
        [],
        [
            RecordedA2aCall(
                "claim",
                {"agent": AGENT, "message": "Dinner 750", "data": None},
                [
                    RecordedA2aTurn(None, ASKED),
                    RecordedA2aTurn({"decision": "approve", "comment": "ok"}, DONE),
                ],
            )
        ],
    )


def test_a_conversation_plays_turn_by_turn_as_the_node_asks() -> None:
    cassette = _conversation()

    assert cassette.a2a_message("claim", {"agent": AGENT, "message": "Dinner 750", "data": None})
    assert cassette.unused() == (0, 0, 1)
    assert cassette.a2a_task("t-1") == ASKED  # a re-run of the step reads it again
    assert cassette.a2a_follow_up("claim", "t-1", {"decision": "approve", "comment": "ok"}) == DONE
    assert cassette.a2a_task("t-1") == DONE
    assert cassette.unused() == (0, 0, 0)
    with pytest.raises(
        Diverged,
        match=r"node 'claim': diverged from the recording: it answered the remote task with "
        r"\{'decision': 'approve'\}; the recording holds 1 answer\(s\) to it",
    ):
        cassette.a2a_follow_up("claim", "t-1", {"decision": "approve"})


def test_another_decision_sent_back_diverges() -> None:
    cassette = _conversation()
    cassette.a2a_message("claim", {"agent": AGENT, "message": "Dinner 750", "data": None})

    with pytest.raises(
        Diverged,
        match=r"it answered the remote task with \{'decision': 'reject'\}; the recording "
        r"answered \{'decision': 'approve', 'comment': 'ok'\}",
    ):
        cassette.a2a_follow_up("claim", "t-1", {"decision": "reject"})


@pytest.mark.parametrize(
    ("args", "recorded"),
    [
        (
            {"agent": AGENT, "message": "Dinner 750", "data": {"n": 1}},
            "it sent 'https://desk.example/a2a' the message 'Dinner 750' with data {'n': 1}; "
            "the recording sent it 'Dinner 750'",
        ),
        (
            {"agent": "https://other.example", "message": "Dinner 750", "data": None},
            "it sent 'https://other.example' the message 'Dinner 750'; the recording sent "
            "'https://desk.example/a2a' 'Dinner 750'",
        ),
    ],
)
def test_another_first_message_says_what_the_recording_sent(
    args: dict[str, object], recorded: str
) -> None:
    with pytest.raises(Diverged) as raised:
        _conversation().a2a_message("claim", args)

    assert str(raised.value) == f"node 'claim': diverged from the recording: {recorded}"


def test_a_second_conversation_the_recording_lacks_diverges() -> None:
    cassette = _conversation()
    args = {"agent": AGENT, "message": "Dinner 750", "data": None}
    cassette.a2a_message("claim", args)

    with pytest.raises(Diverged, match="; the recorded run sent no such message here"):
        cassette.a2a_message("claim", args)


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


def test_a_file_without_a2a_calls_loads_with_none() -> None:
    older = {
        "format": "plait-recording/v1",
        "graph": "g",
        "version": "1.0.0",
        "digest": "d",
        "thread_id": "t",
        "input": {},
        "decisions": [],
        "model_calls": [],
        "tool_calls": [],
        "expected": {"outcome": "success", "steps": ["a"]},
        "recorded_at": "2026-01-01T00:00:00+00:00",
    }

    recording = Recording.from_json(older)

    assert recording.a2a_calls == []
    assert Recording.from_json(recording.to_json()) == recording


def test_a_file_that_is_not_a_recording_is_refused() -> None:
    with pytest.raises(RecordingError, match="its `format` must be 'plait-recording/v1'"):
        Recording.from_json({"graph": "x"})
    with pytest.raises(RecordingError, match="missing or malformed"):
        Recording.from_json({"format": "plait-recording/v1", "graph": "x"})


def _turn_rows(
    node: str, path: str | None, task_id: str, message: str = "Taxi 42"
) -> list[dict[str, object]]:
    """The two records of an ``a2a`` step's first turn, as the node writes them."""
    args: dict[str, object] = {"agent": AGENT, "message": message, "data": None}
    if path is not None:
        args["path"] = path
    task = {"id": task_id, "status": {"state": "TASK_STATE_COMPLETED"}}
    return [
        {"node": node, "tool": "a2a", "args": {**args, "turn": 0}, "result": {"task_id": task_id}},
        {"node": node, "tool": "a2a", "args": {**args, "turn": 0, "reply": True}, "result": task},
    ]


def test_a2a_turns_are_kept_by_the_nodes_path() -> None:
    rows = [
        *_turn_rows("file_claim", "file_claim", "t-top"),
        *_turn_rows("file_claim", "office/desk/file_claim", "t-nested"),
        *_turn_rows("file_claim", "small[0]/file_claim", "t-item-0"),
        *_turn_rows("file_claim", "small[1]/file_claim", "t-item-1"),
        {"node": "lookup", "tool": "search", "args": {"q": "x"}, "result": {"hits": 1}},
        # A tool that happens to be called a2a is a tool.
        {"node": "lookup", "tool": "a2a", "args": {"q": "x"}, "result": 1},
    ]

    tools, remote = recorded_calls(rows, {"file_claim"}, "thread-1")

    assert [(call.node, call.tool) for call in tools] == [("lookup", "search"), ("lookup", "a2a")]
    assert [(call.node, call.turns[0].task["id"]) for call in remote] == [
        ("file_claim", "t-top"),
        ("office/desk/file_claim", "t-nested"),
        ("small[0]/file_claim", "t-item-0"),
        ("small[1]/file_claim", "t-item-1"),
    ]
    # What the step sent, without the turn and path beside it.
    assert {tuple(call.args.items()) for call in remote} == {
        (("agent", AGENT), ("message", "Taxi 42"), ("data", None))
    }


def test_a_top_level_nodes_turns_recorded_before_paths_are_its_own() -> None:
    _, remote = recorded_calls(_turn_rows("file_claim", None, "t-1"), {"file_claim"}, "thread-1")

    assert [(call.node, len(call.turns)) for call in remote] == [("file_claim", 1)]


def test_a_subgraph_nodes_turns_recorded_before_paths_are_refused() -> None:
    rows = [*_turn_rows("file_claim", None, "t-1"), *_turn_rows("ask_desk", None, "t-2")]

    with pytest.raises(
        RecordingError,
        match=r"thread 'thread-1' sent messages to remote agents from inside subgraphs "
        r"\(ask_desk\) on a Plait that did not keep where those nodes ran",
    ):
        recorded_calls(rows, {"file_claim"}, "thread-1")


def test_a_recording_of_a2a_nodes_in_subgraphs_reads_back_as_written() -> None:
    calls = [
        RecordedA2aCall(path, {"agent": AGENT, "message": "m", "data": None}, [])
        for path in ("file_claim", "office/desk/file_claim", "small[1]/file_claim")
    ]
    recording = Recording(
        graph="g",
        version="1.0.0",
        digest="d",
        thread_id="t",
        input={},
        decisions=[],
        model_calls=[],
        tool_calls=[],
        a2a_calls=calls,
        expected=_ending(),
    )

    data = recording.to_json()

    assert data["format"] == "plait-recording/v1"
    assert [call["node"] for call in data["a2a_calls"]] == [call.node for call in calls]
    assert Recording.from_json(data) == recording


def test_a_map_items_own_calls_are_served_from_the_maps_only_where_none_are_its_own() -> None:
    """`each` holds what a recording made before items kept their own calls holds."""
    cassette = Cassette(
        [
            RecordedModelCall("each", "m", {"content": "shared"}),
            RecordedModelCall("each[1]", "m", {"content": "own"}),
        ],
        [RecordedToolCall("look", "t", {"q": 1}, "shared result")],
    )

    assert cassette.model_reply("each[1]", "m").content == "own"
    assert cassette.model_reply("each[0]", "m").content == "shared"
    assert cassette.tool_result("look[3]", "t", {"q": 1}) == "shared result"
    # Item 1 has calls of its own: when they run out it diverges, it takes none of the map's.
    with pytest.raises(Diverged, match=r"node 'each\[1\]': .* reply 2 in this node; .* had 1"):
        cassette.model_reply("each[1]", "m")
    # A node in an item's subgraph is no call of the map's own.
    with pytest.raises(Diverged, match=r"node 'each\[0\]/classify': .* had 0 model call"):
        cassette.model_reply("each[0]/classify", "m")
