"""A replay's cassette inside compiled nodes: a map item that leaves the recording ends the
run (it is not one lost item), an agent does not hand the divergence to its model, an
``a2a`` node in a subgraph or a map item's subgraph takes the answers kept at its path, and
each item of a map of ``llm``, ``agent`` or ``tool`` items takes the calls kept at its own
(``each[1]``)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from langchain_core.messages import AIMessage

from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.registry import SpecRegistry
from plait.engine.tools.cassette import (
    Cassette,
    Diverged,
    RecordedA2aCall,
    RecordedA2aTurn,
    RecordedModelCall,
    RecordedToolCall,
    playing,
)
from tests.unit.compiler.helpers import Runner, chain, make_spec, scripted


def _map_spec() -> object:
    return make_spec(
        {
            "each": {
                "kind": "map",
                "items": "state.topics",
                "do": {"kind": "llm", "model": "m", "prompt": "{{ item }}"},
                "min_success": 1,
                "errors": "errors",
                "output": "answers",
            }
        },
        chain("each"),
        {"topics": {}, "answers": {}, "errors": {}},
        models={"m": scripted({"content": "live"})},
    )


# These two keep the map's calls together under `each`, as recordings made before each item
# kept its own do (the items share them in call order).


async def test_a_map_item_that_leaves_the_recording_ends_the_run() -> None:
    recorded = [RecordedModelCall("each", "m", {"content": "recorded"})]  # one of two items
    runner = Runner(_map_spec())  # type: ignore[arg-type]

    with playing(Cassette(recorded, [])), pytest.raises(Diverged, match="diverged from the"):
        await runner.start({"topics": ["a", "b"]})


async def test_with_every_reply_recorded_the_map_takes_them_and_calls_nothing() -> None:
    recorded = [RecordedModelCall("each", "m", {"content": f"recorded {i}"}) for i in range(2)]
    runner = Runner(_map_spec())  # type: ignore[arg-type]

    with playing(Cassette(recorded, [])) as cassette:
        out = await runner.start({"topics": ["a", "b"]})

    assert sorted(out["answers"]) == ["recorded 0", "recorded 1"]
    assert cassette.unused() == (0, 0, 0)


# --------------------------------------------------------------------------- a2a in subgraphs

#: Where nothing listens: a node that called its agent would fail to connect.
NOWHERE = "http://127.0.0.1:9"
SENT = {"agent": NOWHERE, "message": "Taxi 42", "data": None}


def _desk() -> LoadedSpec:
    """A child whose one node asks the remote agent, with a header secret."""
    return make_spec(
        {
            "file_claim": {
                "kind": "a2a",
                "url": "{{ state.agent_url }}",
                "message": "{{ state.request }}",
                "headers": {"x-desk-token": "DESK_TOKEN"},
                "writes": {"remote": "result"},
            }
        },
        chain("file_claim"),
        {"agent_url": {"default": NOWHERE}, "request": {}, "remote": {}},
        name="desk",
        output=["remote"],
        secrets=["DESK_TOKEN"],
    )


def _office() -> LoadedSpec:
    """A child that runs ``desk``: its node is two subgraphs deep from the top."""
    return make_spec(
        {"desk": {"kind": "subgraph", "ref": "desk@1.0.0", "writes": {"remote": "result.remote"}}},
        chain("desk"),
        {"agent_url": {"default": NOWHERE}, "request": {}, "remote": {}},
        name="office",
        output=["remote"],
    )


def _claims() -> LoadedSpec:
    """``file_claim`` at the top, in ``office/desk``, and in each item of map ``small``.

    Every one of them sends the same agent the same text.
    """
    return make_spec(
        {
            "file_claim": {
                "kind": "a2a",
                "url": "{{ state.agent_url }}",
                "message": "{{ state.request }}",
                "writes": {"top": "result.task_id"},
            },
            "office": {
                "kind": "subgraph",
                "ref": "office@1.0.0",
                "writes": {"nested": "result.remote.task_id"},
            },
            "small": {
                "kind": "map",
                "items": "state.smalls",
                "do": {
                    "kind": "subgraph",
                    "ref": "desk@1.0.0",
                    "input": {"request": "item"},
                    "result": "result.remote.task_id",
                },
                "output": "items",
            },
        },
        chain("file_claim", "office", "small"),
        {
            "agent_url": {"default": NOWHERE},
            "request": {},
            "smalls": {},
            "top": {},
            "nested": {},
            "items": {},
        },
    )


def _settled(task_id: str) -> RecordedA2aCall:
    """One conversation: the remote paid at once, as task ``task_id``."""
    task = {
        "id": task_id,
        "contextId": f"c-{task_id}",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "a", "parts": [{"text": f"paid by {task_id}"}]}],
    }
    return RecordedA2aCall("?", SENT, [RecordedA2aTurn(None, task)])


def _at(path: str, task_id: str) -> RecordedA2aCall:
    return replace(_settled(task_id), node=path)


def _runner() -> Runner:
    return Runner(_claims(), SpecRegistry([_desk(), _office()]))


async def test_each_a2a_node_takes_the_answers_recorded_at_its_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DESK_TOKEN", raising=False)  # a replay reads no header secret
    recorded = [  # the reverse of the order asked, so matching by id alone would mix them up
        _at("small[1]/file_claim", "t-item-1"),
        _at("small[0]/file_claim", "t-item-0"),
        _at("office/desk/file_claim", "t-nested"),
        _at("file_claim", "t-top"),  # what recordings made before paths hold
    ]

    with playing(Cassette([], [], recorded)) as cassette:
        out = await _runner().start({"request": "Taxi 42", "smalls": ["Taxi 42", "Taxi 42"]})

    assert (out["top"], out["nested"], out["items"]) == (
        "t-top",
        "t-nested",
        ["t-item-0", "t-item-1"],
    )
    assert cassette.unused() == (0, 0, 0)


@pytest.mark.parametrize(
    ("recorded", "diverged"),
    [
        # Recorded under the bare id (or at another depth): not this node's.
        (["file_claim", "file_claim", "small[0]/file_claim"], "office/desk/file_claim"),
        (["file_claim", "desk/file_claim"], "office/desk/file_claim"),
        # Each item has its own answers: item 1's are not item 0's.
        (["file_claim", "office/desk/file_claim", "small[1]/file_claim"], "small[0]/file_claim"),
    ],
)
async def test_an_a2a_node_with_no_answer_at_its_path_diverges_naming_the_path(
    recorded: list[str], diverged: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DESK_TOKEN", raising=False)
    calls = [_at(path, f"t-{i}") for i, path in enumerate(recorded)]

    with playing(Cassette([], [], calls)), pytest.raises(Diverged) as raised:
        await _runner().start({"request": "Taxi 42", "smalls": ["Taxi 42"]})

    assert str(raised.value) == (
        f"node {diverged!r}: diverged from the recording: it sent {NOWHERE!r} the message "
        "'Taxi 42'; the recorded run sent no such message here"
    )


# ------------------------------------------------- model replies and tool results by node path

FNS = "plait_compiler_fns"


def _triage() -> LoadedSpec:
    """A child with a model node `classify` and a tool node `lookup`: the parent's ids too."""
    return make_spec(
        {
            "classify": {"kind": "llm", "model": "m", "prompt": "{{ state.q }}", "output": "kind"},
            "lookup": {
                "kind": "tool",
                "tool": "lookup",
                "args": {"query": "state.q"},
                "output": "found",
            },
        },
        chain("classify", "lookup"),
        {"q": {}, "kind": {}, "found": {}},
        name="triage",
        output=["kind", "found"],
        models={"m": scripted({"content": "live"})},
        tools={"lookup": {"function": f"{FNS}:lookup"}},
    )


def _same_ids() -> LoadedSpec:
    """`classify` and `lookup` at the top, in subgraph `office`, and in each item of `each`.

    Every one of them asks the same model the same prompt, and calls the same tool with the
    same arguments: only where they ran tells their recorded calls apart.
    """
    return make_spec(
        {
            "classify": {"kind": "llm", "model": "m", "prompt": "{{ state.q }}", "output": "kind"},
            "lookup": {
                "kind": "tool",
                "tool": "lookup",
                "args": {"query": "state.q"},
                "output": "found",
            },
            "office": {
                "kind": "subgraph",
                "ref": "triage@1.0.0",
                "writes": {"nested": "[result.kind, result.found]"},
            },
            "each": {
                "kind": "map",
                "items": "state.qs",
                "do": {
                    "kind": "subgraph",
                    "ref": "triage@1.0.0",
                    "input": {"q": "item"},
                    "result": "[result.kind, result.found]",
                },
                "output": "items",
            },
        },
        chain("classify", "lookup", "office", "each"),
        {"q": {}, "qs": {}, "kind": {}, "found": {}, "nested": {}, "items": {}},
        models={"m": scripted({"content": "live"})},
        tools={"lookup": {"function": f"{FNS}:lookup"}},
    )


#: Where the spec above runs `classify` and `lookup`, in the order it runs them.
PATHS = ["classify", "office/classify", "each[0]/classify", "each[1]/classify"]


def _recorded(paths: list[str]) -> tuple[list[RecordedModelCall], list[RecordedToolCall]]:
    """A reply and a tool result at each of ``paths``, each saying where it was recorded.

    Listed in the reverse order of the run's: matched by the bare id, the top-level
    `classify` would take the last item's reply.
    """
    models = [RecordedModelCall(path, "m", {"content": f"kind@{path}"}) for path in paths]
    tools = [
        RecordedToolCall(path.replace("classify", "lookup"), "lookup", {"query": "plait"}, path)
        for path in paths
    ]
    return models[::-1], tools[::-1]


def _paths_runner() -> Runner:
    return Runner(_same_ids(), SpecRegistry([_triage()]))


async def test_model_replies_and_tool_results_are_taken_at_the_path_of_the_node_that_asks() -> None:
    models, tools = _recorded(PATHS)

    with playing(Cassette(models, tools)) as cassette:
        out = await _paths_runner().start({"q": "plait", "qs": ["plait", "plait"]})

    assert (out["kind"], out["found"]) == ("kind@classify", "classify")
    assert out["nested"] == ["kind@office/classify", "office/classify"]
    assert out["items"] == [
        ["kind@each[0]/classify", "each[0]/classify"],
        ["kind@each[1]/classify", "each[1]/classify"],
    ]
    assert cassette.unused() == (0, 0, 0)


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        (
            "office/classify",
            "node 'office/classify': diverged from the recording: it asked 'm' for reply 1 in "
            "this node; the recorded run had 0 model call(s) here",
        ),
        (
            "each[1]/classify",
            "node 'each[1]/classify': diverged from the recording: it asked 'm' for reply 1 in "
            "this node; the recorded run had 0 model call(s) here",
        ),
    ],
)
async def test_a_node_with_no_reply_at_its_path_diverges_naming_the_path(
    missing: str, message: str
) -> None:
    # The other nodes of the same id have theirs: matched by id, it would take one of them.
    models, tools = _recorded(PATHS)
    models = [call for call in models if call.node != missing]

    with playing(Cassette(models, tools)), pytest.raises(Diverged) as raised:
        await _paths_runner().start({"q": "plait", "qs": ["plait", "plait"]})

    assert str(raised.value) == message


async def test_a_tool_call_with_other_arguments_diverges_naming_the_path() -> None:
    models, tools = _recorded(PATHS)
    tools = [
        replace(call, args={"query": "braid"}) if call.node == "office/lookup" else call
        for call in tools
    ]

    with playing(Cassette(models, tools)), pytest.raises(Diverged) as raised:
        await _paths_runner().start({"q": "plait", "qs": ["plait", "plait"]})

    assert str(raised.value) == (
        "node 'office/lookup': diverged from the recording: it called tool 'lookup' with "
        "{'query': 'plait'}; the recording called it with {'query': 'braid'}"
    )


# ----------------------------------------------------- a map's own calls, item by item

ITEMS = ["taxi", "hotel", "dinner"]


class _Asked(Cassette):
    """A cassette that notes the path of each model call in the order the replay asks."""

    def __init__(self, models: list[RecordedModelCall], tools: list[RecordedToolCall]) -> None:
        super().__init__(models, tools)
        self.asked: list[str] = []

    def model_reply(self, node: str, model: str) -> AIMessage:
        self.asked.append(node)
        return super().model_reply(node, model)


def _agents_map() -> LoadedSpec:
    """Map `each` of three agent items at once: each looks its item up, then answers."""
    return make_spec(
        {
            "each": {
                "kind": "map",
                "items": "state.claims",
                "concurrency": 3,
                "do": {"kind": "agent", "model": "m", "tools": ["lookup"], "prompt": "{{ item }}"},
                "output": "answers",
            }
        },
        chain("each"),
        {"claims": {}, "answers": {}},
        models={"m": scripted({"content": "live"})},
        tools={"lookup": {"function": f"{FNS}:lookup"}},
    )


def _agent_turns(path: str, item: str) -> list[RecordedModelCall]:
    """An agent item's two turns: it looks ``item`` up, then answers saying where it ran."""
    looks = {"tool_calls": [{"name": "lookup", "args": {"query": item}, "id": f"c-{item}"}]}
    return [
        RecordedModelCall(path, "m", looks),
        RecordedModelCall(path, "m", {"content": f"{item} answered at {path}"}),
    ]


async def test_each_agent_item_takes_its_own_turns_whatever_order_items_ask_in() -> None:
    # Recorded as if item 2 ran both its turns first, then item 1, then item 0: taken from
    # one queue in the order asked, an item asking before item 2 would get item 2's turns.
    # Which item asks first is the scheduler's choice, so the order asked is not
    # asserted: it matched the recording once on a loaded CI machine.
    models = [
        call
        for index in reversed(range(3))
        for call in _agent_turns(f"each[{index}]", ITEMS[index])
    ]
    tools = [
        RecordedToolCall(f"each[{index}]", "lookup", {"query": item}, f"{item} found")
        for index, item in reversed(list(enumerate(ITEMS)))
    ]
    cassette = Cassette(models, tools)

    with playing(cassette):
        out = await Runner(_agents_map()).start({"claims": ITEMS})

    assert out["answers"] == [f"{item} answered at each[{i}]" for i, item in enumerate(ITEMS)]
    assert cassette.unused() == (0, 0, 0)


def _llm_map(concurrency: int = 3) -> LoadedSpec:
    return make_spec(
        {
            "each": {
                "kind": "map",
                "items": "state.claims",
                "concurrency": concurrency,
                "do": {"kind": "llm", "model": "m", "prompt": "{{ item }}"},
                "output": "answers",
            }
        },
        chain("each"),
        {"claims": {}, "answers": {}},
        models={"m": scripted({"content": "live"})},
    )


async def test_an_llm_item_the_recording_lacks_diverges_naming_the_item() -> None:
    # Items 0 and 2 have theirs; taken from one queue, item 1 would have taken item 2's.
    recorded = [RecordedModelCall(f"each[{i}]", "m", {"content": f"r{i}"}) for i in (2, 0)]

    with playing(Cassette(recorded, [])), pytest.raises(Diverged) as raised:
        await Runner(_llm_map()).start({"claims": ITEMS})

    assert str(raised.value) == (
        "node 'each[1]': diverged from the recording: it asked 'm' for reply 1 in this node; "
        "the recorded run had 0 model call(s) here"
    )


async def test_a_recording_that_keeps_a_maps_calls_together_is_shared_in_call_order() -> None:
    """A recording made before each item's calls were kept apart: all under `each`."""
    recorded = [RecordedModelCall("each", "m", {"content": f"r{i}"}) for i in range(3)]
    cassette = _Asked(recorded, [])

    with playing(cassette):
        out = await Runner(_llm_map(concurrency=1)).start({"claims": ITEMS})

    assert cassette.asked == ["each[0]", "each[1]", "each[2]"]
    assert out["answers"] == ["r0", "r1", "r2"]  # one at a time: in the order recorded
    assert cassette.unused() == (0, 0, 0)


async def test_each_tool_item_takes_the_result_recorded_at_its_own_path() -> None:
    """The items call the tool with the same arguments: only where tells their results apart."""
    spec = make_spec(
        {
            "each": {
                "kind": "map",
                "items": "state.claims",
                "concurrency": 3,
                "do": {"kind": "tool", "tool": "lookup", "args": {"query": "'plait'"}},
                "output": "found",
            }
        },
        chain("each"),
        {"claims": {}, "found": {}},
        tools={"lookup": {"function": f"{FNS}:lookup"}},
    )
    recorded = [
        RecordedToolCall(f"each[{i}]", "lookup", {"query": "plait"}, f"found for {i}")
        for i in (2, 1, 0)
    ]

    with playing(Cassette([], recorded)) as cassette:
        out = await Runner(spec).start({"claims": ITEMS})

    assert out["found"] == ["found for 0", "found for 1", "found for 2"]
    assert cassette.unused() == (0, 0, 0)


async def test_a_map_of_llm_items_inside_a_map_items_subgraph_keeps_both_indexes() -> None:
    child = make_spec(
        {
            "ask": {
                "kind": "map",
                "items": "state.parts",
                "do": {"kind": "llm", "model": "m", "prompt": "{{ item }}"},
                "output": "answers",
            }
        },
        chain("ask"),
        {"parts": {}, "answers": {}},
        name="parts",
        output=["answers"],
        models={"m": scripted({"content": "live"})},
    )
    top = make_spec(
        {
            "each": {
                "kind": "map",
                "items": "state.claims",
                "do": {
                    "kind": "subgraph",
                    "ref": "parts@1.0.0",
                    "input": {"parts": "item"},
                    "result": "result.answers",
                },
                "output": "answers",
            }
        },
        chain("each"),
        {"claims": {}, "answers": {}},
    )
    paths = [f"each[{i}]/ask[{j}]" for i in range(2) for j in range(2)]
    recorded = [RecordedModelCall(path, "m", {"content": path}) for path in reversed(paths)]

    with playing(Cassette(recorded, [])) as cassette:
        out = await Runner(top, SpecRegistry([child])).start({"claims": [["a", "b"], ["c", "d"]]})

    assert out["answers"] == [paths[:2], paths[2:]]
    assert cassette.unused() == (0, 0, 0)
