"""Model replies and tool results are recorded by the path of the node that asked: how
records and recording files made before paths were kept (node ids only) are placed in the
spec, or refused where a node id could be several nodes."""

from __future__ import annotations

from typing import Any

import pytest

from plait.engine.compiler import CompiledSpec, compile_spec
from plait.engine.run.replay import (
    BY_ID,
    BY_PATH,
    Ending,
    Recording,
    RecordingError,
    older_paths,
    recorded_calls,
    replay_recording,
    with_paths,
)
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.nesting import places
from plait.engine.spec.registry import SpecRegistry
from plait.engine.tools.cassette import Cassette, Diverged, RecordedModelCall, RecordedToolCall
from tests.unit.compiler.helpers import chain, make_spec, scripted

MODELS = {"m": scripted({"content": "live"})}


def _llm() -> dict[str, Any]:
    return {"kind": "llm", "model": "m", "prompt": "hi"}


def _specs() -> tuple[LoadedSpec, SpecRegistry]:
    """`classify` at the top and in `office`'s child; `answer` only at the top, `check` only
    in `office`'s child, `sort` only in the items of map `each`."""
    desk = make_spec(
        {"classify": _llm(), "check": _llm()},
        chain("classify", "check"),
        name="desk",
        models=MODELS,
    )
    queue = make_spec({"sort": _llm()}, chain("sort"), name="queue", models=MODELS)
    top = make_spec(
        {
            "classify": _llm(),
            "answer": _llm(),
            "office": {"kind": "subgraph", "ref": "desk@1.0.0"},
            "each": {
                "kind": "map",
                "items": "[1, 2]",
                "do": {"kind": "subgraph", "ref": "queue@1.0.0"},
            },
        },
        chain("classify", "answer", "office", "each"),
        name="top",
        models=MODELS,
    )
    return top, SpecRegistry([top, desk, queue])


def _compiled() -> CompiledSpec:
    top, registry = _specs()
    return compile_spec(top, registry)


def test_the_spec_lists_every_node_where_it_runs() -> None:
    top, registry = _specs()

    found = [place.path for place in places(top, registry.resolve)]

    assert found == [
        "classify",
        "answer",
        "office",
        "office/classify",
        "office/check",
        "each",
        "each[i]/sort",
    ]


def test_node_ids_found_once_outside_map_items_are_placed_the_rest_are_not() -> None:
    top, registry = _specs()

    placed, unplaced = older_paths(
        {"answer", "check", "classify", "sort", "gone"}, places(top, registry.resolve)
    )

    # A top-level node's path is its id: older records of the top level keep their keys.
    assert placed == {"answer": "answer", "check": "office/check", "gone": "gone"}
    assert unplaced == {"classify": ["classify", "office/classify"], "sort": ["each[i]/sort"]}


def _recording(models: list[str], tools: list[str], keys: str = BY_ID) -> Recording:
    return Recording(
        graph="top",
        version="1.0.0",
        digest="d",
        thread_id="t",
        input={},
        decisions=[],
        model_calls=[RecordedModelCall(node, "m", {"content": node}) for node in models],
        tool_calls=[RecordedToolCall(node, "lookup", {}, node) for node in tools],
        a2a_calls=[],
        expected=Ending("success", []),
        node_keys=keys,
    )


def test_a_file_recorded_before_paths_is_placed_in_the_spec_it_was_recorded_on() -> None:
    older = _recording(["answer", "check"], ["check"])

    placed = with_paths(older, _compiled())

    assert placed.node_keys == BY_PATH
    assert [call.node for call in placed.model_calls] == ["answer", "office/check"]
    assert [call.node for call in placed.tool_calls] == ["office/check"]
    assert [call.reply["content"] for call in placed.model_calls] == ["answer", "check"]


def test_a_file_recorded_before_paths_whose_nodes_cannot_be_told_apart_is_refused() -> None:
    older = _recording(["classify", "answer"], ["sort"])

    with pytest.raises(RecordingError) as refused:
        with_paths(older, _compiled())

    assert str(refused.value) == (
        "it was recorded on a Plait that kept only the id of the node making each model or "
        "tool call, not where among subgraphs it ran, and node `classify` could be "
        "`classify` or `office/classify`; node `sort` could be `each[i]/sort` (`[i]`: an "
        "item of that map, which one is not known): a replay could not tell their recorded "
        "calls apart; record a new run"
    )


def test_a_recording_keyed_by_path_is_left_as_it_is() -> None:
    recording = _recording(["classify", "office/classify"], [], keys=BY_PATH)

    assert with_paths(recording, _compiled()) is recording


async def test_a_replay_refuses_a_recording_keyed_by_node_id() -> None:
    top, _ = _specs()

    with pytest.raises(RecordingError, match="place them with `with_paths`"):
        await replay_recording(top, lambda _: _compiled(), None, _recording([], []))  # type: ignore[arg-type]


def test_files_say_their_calls_are_kept_by_path_and_older_files_read_as_by_id() -> None:
    recording = _recording(["office/check"], ["office/check"], keys=BY_PATH)

    data = recording.to_json()

    assert data["node_keys"] == "path"
    assert Recording.from_json(data) == recording
    del data["node_keys"]  # as files recorded before hold them
    assert Recording.from_json(data).node_keys == BY_ID
    with pytest.raises(RecordingError, match="`node_keys` is 'nodes'"):
        Recording.from_json({**data, "node_keys": "nodes"})


def test_tool_results_are_kept_by_their_path_and_older_ones_by_where_they_were_placed() -> None:
    rows = [
        {"node": "lookup", "path": "lookup", "tool": "t", "args": {}, "result": 1},
        {"node": "lookup", "path": "office/lookup", "tool": "t", "args": {}, "result": 2},
        {"node": "lookup", "path": "each[1]/lookup", "tool": "t", "args": {}, "result": 3},
        {"node": "check", "path": None, "tool": "t", "args": {}, "result": 4},  # an older row
        {"node": "answer", "tool": "t", "args": {}, "result": 5},  # older, top level
    ]

    tools, _ = recorded_calls(rows, set(), "thread-1", {"check": "office/check"})

    assert [(call.node, call.result) for call in tools] == [
        ("lookup", 1),
        ("office/lookup", 2),
        ("each[1]/lookup", 3),
        ("office/check", 4),
        ("answer", 5),
    ]


def test_a_file_before_paths_keeps_a_maps_own_calls_at_the_map_which_its_items_share() -> None:
    """A map of `llm` items is one node in such a file: its items' replies in call order."""
    desk = make_spec(
        {"ask": {"kind": "map", "items": "[1, 2]", "do": _llm()}},
        chain("ask"),
        name="desk",
        models=MODELS,
    )
    top = make_spec(
        {"office": {"kind": "subgraph", "ref": "desk@1.0.0"}}, chain("office"), name="top"
    )
    older = _recording(["ask", "ask"], [])
    older.model_calls = [RecordedModelCall("ask", "m", {"content": f"r{i}"}) for i in range(2)]

    placed = with_paths(older, compile_spec(top, SpecRegistry([top, desk])))

    assert [call.node for call in placed.model_calls] == ["office/ask", "office/ask"]
    cassette = Cassette(placed.model_calls, [])
    # Item 1 asks first here: it takes the first reply, as such a replay always did.
    assert cassette.model_reply("office/ask[1]", "m").content == "r0"
    assert cassette.model_reply("office/ask[0]", "m").content == "r1"
    with pytest.raises(Diverged) as raised:
        cassette.model_reply("office/ask[0]", "m")
    assert str(raised.value) == (
        "node 'office/ask[0]': diverged from the recording: it asked 'm' for reply 3 of the "
        "items of map 'office/ask', whose calls the recording keeps together (made before "
        "each item's were kept apart); it had 2"
    )
