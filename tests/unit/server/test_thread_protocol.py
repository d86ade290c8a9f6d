"""Journal events -> thread protocol events, and the filters of event streams."""

from __future__ import annotations

from typing import Any

from plait.server.http.thread_protocol import RUN_SPAN, EventFilter, RunTranslator
from plait.server.queue.journal import JournalEvent


def _events(
    translator: RunTranslator, *journal: tuple[str, Any], status: str = "success"
) -> list[tuple[str, tuple[str, ...], Any]]:
    out = []
    for seq, (name, data) in enumerate(journal, start=1):
        for event in translator.translate(JournalEvent("r", seq, name, data), status):
            assert event.seq == translator.queue_id * RUN_SPAN + seq
            out.append((event.method, event.namespace, event.data))
    return out


def test_a_streamed_message_is_finished_by_its_nodes_update() -> None:
    meta = {"langgraph_node": "answer"}
    events = _events(
        RunTranslator(3, "g"),
        ("metadata", {"run_id": "r", "attempt": 1}),
        ("messages", [{"type": "AIMessageChunk", "id": "m", "content": "Hel"}, meta]),
        (
            "messages",
            [
                {"type": "AIMessageChunk", "id": "m", "content": [{"type": "text", "text": "lo"}]},
                meta,
            ],
        ),
        ("updates", {"answer": {"reply": "Hello"}}),
        ("end", None),
    )
    kinds = [data.get("event") or data.get("node") for _, _, data in events]
    assert kinds == [
        "started",
        "message-start",
        "content-block-start",
        "content-block-delta",
        "content-block-delta",
        "content-block-finish",
        "message-finish",
        "answer",
        "completed",
    ]
    assert events[5][2]["content"] == {"type": "text", "text": "Hello"}


def test_interrupts_cancels_and_errors_end_the_run_as_the_sdk_expects() -> None:
    interrupted = _events(
        RunTranslator(1, "g"),
        ("updates", {"__interrupt__": [{"id": "i1", "value": {"ask": "ok?"}}]}),
        ("values", {"x": 1, "__interrupt__": [{"id": "i1"}]}),
        ("end", None),
    )
    assert interrupted == [
        ("input.requested", (), {"interrupt_id": "i1", "payload": {"ask": "ok?"}}),
        ("values", (), {"x": 1}),
        ("lifecycle", (), {"event": "interrupted"}),
    ]
    cancelled = _events(RunTranslator(1, "g"), ("end", None), status="interrupted")
    assert cancelled[-1][2]["event"] == "failed"
    failed = _events(
        RunTranslator(1, "g"), ("error", {"error": "E", "message": "boom"}), ("end", None)
    )
    assert failed == [("lifecycle", (), {"event": "failed", "error": "boom"})]


def test_subgraph_events_carry_their_namespace() -> None:
    events = _events(
        RunTranslator(1, "g"), ("values|child:abc", {"y": 2}), ("custom|child:abc", "hi")
    )
    assert events == [
        ("values", ("child:abc",), {"y": 2}),
        ("custom", ("child:abc",), {"payload": "hi"}),
    ]


def test_filters_match_channels_namespace_prefixes_and_depth() -> None:
    every = EventFilter(frozenset({"values", "input"}))
    assert every.matches("values", ("a:1", "b:2")) and every.matches("input.requested", ())
    assert not every.matches("updates", ()) and not every.matches("unknown", ())
    child = EventFilter(frozenset({"values"}), namespaces=(("child",),), depth=0)
    assert child.matches("values", ("child:abc",))
    assert not child.matches("values", ("child:abc", "grand:1"))  # deeper than depth 0
    assert not child.matches("values", ())
    exact = EventFilter(frozenset({"values"}), namespaces=(("child:abc",),))
    assert exact.matches("values", ("child:abc", "x:1")) and not exact.matches(
        "values", ("child:xyz",)
    )


def test_tool_calls_are_blocks_after_the_text() -> None:
    meta = {"langgraph_node": "agent"}
    piece = {"type": "tool_call_chunk", "index": 0, "id": "c1", "name": "schedule"}
    events = _events(
        RunTranslator(1, "g"),
        (
            "messages",
            [
                {
                    "type": "AIMessageChunk",
                    "id": "m",
                    "content": "",
                    "tool_call_chunks": [{**piece, "args": '{"hours": '}],
                },
                meta,
            ],
        ),
        (
            "messages",
            [
                {
                    "type": "AIMessageChunk",
                    "id": "m",
                    "content": "",
                    "chunk_position": "last",
                    "tool_call_chunks": [{"index": 0, "args": "[1, 2]}"}],
                },
                meta,
            ],
        ),
        (
            "messages",
            [
                {
                    "type": "ai",
                    "id": "w",
                    "content": "",
                    "tool_calls": [{"id": "c2", "name": "lookup", "args": {"q": "x"}}],
                },
                meta,
            ],
        ),
        (
            "messages",
            [
                {
                    "type": "ai",
                    "id": "bad",
                    "content": "",
                    "tool_call_chunks": [{"index": 0, "id": "c3", "name": "n", "args": "{oops"}],
                },
                meta,
            ],
        ),
    )
    blocks = [
        (data["event"], data.get("index"), data.get("content") or data.get("delta"))
        for _, _, data in events
    ]
    assert blocks[2:5] == [
        (
            "content-block-start",
            1,
            {"type": "tool_call_chunk", "id": "c1", "name": "schedule", "args": ""},
        ),
        ("content-block-delta", 1, {"type": "tool-call-delta", "args": '{"hours": '}),
        ("content-block-delta", 1, {"type": "tool-call-delta", "args": "[1, 2]}"}),
    ]
    assert blocks[5:8] == [
        ("content-block-finish", 0, {"type": "text", "text": ""}),
        (
            "content-block-finish",
            1,
            {"type": "tool_call", "id": "c1", "name": "schedule", "args": {"hours": [1, 2]}},
        ),
        ("message-finish", None, None),
    ]
    whole = [content for event, _, content in blocks[8:] if event == "content-block-finish"]
    assert whole[1] == {"type": "tool_call", "id": "c2", "name": "lookup", "args": {"q": "x"}}
    assert whole[-1]["type"] == "invalid_tool_call" and whole[-1]["args"] == "{oops"
