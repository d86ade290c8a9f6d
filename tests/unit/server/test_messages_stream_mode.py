"""The Agent Server's ``messages`` stream mode built from LangGraph's message chunks."""

from __future__ import annotations

from langchain_core.messages import AIMessageChunk, ToolMessage

from plait.server.queue.stream_events import plan_stream

META = {"langgraph_node": "agent"}


def test_chunks_accumulate_into_partials_and_a_whole_message_is_complete() -> None:
    plan = plan_stream(["messages"], subgraphs=False)
    assert "messages" in plan.langgraph_modes
    first = plan.events((), "messages", (AIMessageChunk(content="Hel", id="m1"), META))
    second = plan.events((), "messages", (AIMessageChunk(content="lo", id="m1"), META))
    tool = plan.events(
        (), "messages", (ToolMessage(content="42", tool_call_id="c1", id="t1"), META)
    )

    assert [name for name, _ in first] == ["messages/metadata", "messages/partial"]
    assert first[0][1] == {"m1": {"metadata": META}}
    assert second == [("messages/partial", [second[0][1][0]])]
    assert second[0][1][0]["content"] == "Hello" and second[0][1][0]["type"] == "ai"
    assert [name for name, _ in tool] == ["messages/metadata", "messages/complete"]
    assert tool[1][1][0]["type"] == "tool" and tool[1][1][0]["content"] == "42"


def test_tuple_form_is_unchanged_and_sent_alongside() -> None:
    chunk = AIMessageChunk(content="Hi", id="m1")
    tuple_plan = plan_stream("messages-tuple", subgraphs=False)
    tuple_only = tuple_plan.events((), "messages", (chunk, META))
    both = plan_stream(["messages", "messages-tuple"], subgraphs=False).events(
        (), "messages", (chunk, META)
    )
    assert tuple_only == [("messages", [chunk.model_dump(), META])]
    assert both[0] == tuple_only[0]
    assert [name for name, _ in both[1:]] == ["messages/metadata", "messages/partial"]


def test_a_message_without_id_gets_one_and_subgraph_events_carry_their_namespace() -> None:
    plan = plan_stream(["messages"], subgraphs=True)
    events = plan.events(("child:1",), "messages", (AIMessageChunk(content="x"), META))
    assert [name for name, _ in events] == ["messages/metadata|child:1", "messages/partial|child:1"]
    (message_id,) = events[0][1]
    assert events[1][1][0]["id"] == message_id


def test_other_modes_send_no_message_events() -> None:
    plan = plan_stream(["values"], subgraphs=False)
    assert plan.events((), "messages", (AIMessageChunk(content="x", id="m"), META)) == []
