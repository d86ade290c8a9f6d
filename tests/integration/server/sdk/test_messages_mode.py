"""``stream_mode="messages"`` as LangGraph Platform sends it, beside ``messages-tuple``."""

from __future__ import annotations

import itertools
from typing import Any

from langgraph_sdk.client import LangGraphClient

from tests.integration.server.sdk.helpers import collect, events_named

ECHO = "sdk-echo"
REPLY = "Version two heard you."


async def test_messages_mode_sends_metadata_then_the_accumulated_message(
    client: LangGraphClient,
) -> None:
    thread = await client.threads.create()
    parts = await collect(
        client.runs.stream(
            thread["thread_id"], ECHO, input={"text": "hello"}, stream_mode="messages"
        )
    )
    names = [part.event for part in parts]
    assert names[0] == "metadata" and names[-1] == "end"
    # No tuple form: that is `messages-tuple`.
    assert set(names[1:-1]) == {"messages/metadata", "messages/partial"}, names
    assert names[1] == "messages/metadata"

    (metadata,) = events_named(parts, "messages/metadata")
    (message_id,) = metadata
    assert metadata[message_id]["metadata"]["langgraph_node"] == "answer"

    partials: list[list[dict[str, Any]]] = events_named(parts, "messages/partial")
    assert len(partials) > 1, "the reply was not streamed in pieces"
    contents = []
    for data in partials:
        (message,) = data  # a list of one message, the whole message so far
        assert message["id"] == message_id
        assert message["type"] == "ai"  # a message, not a chunk
        contents.append(message["content"])
    # Each partial is the one before plus the next tokens; the last is the whole reply.
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(contents))
    assert contents[-1] == REPLY


async def test_both_message_modes_at_once_keep_the_tuple_form(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    tuple_only = await collect(
        client.runs.stream(
            thread["thread_id"], ECHO, input={"text": "a"}, stream_mode=["messages-tuple"]
        )
    )
    both = await collect(
        client.runs.stream(
            thread["thread_id"],
            ECHO,
            input={"text": "a"},
            stream_mode=["messages-tuple", "messages"],
        )
    )

    def tuples(parts: list[Any]) -> list[tuple[str, str, str]]:
        return [
            (chunk["type"], chunk["content"], meta["langgraph_node"])
            for chunk, meta in events_named(parts, "messages")
        ]

    assert tuples(both) == tuples(tuple_only)
    assert {chunk_type for chunk_type, _, _ in tuples(both)} == {"AIMessageChunk"}
    assert "".join(content for _, content, _ in tuples(both)) == REPLY
    assert events_named(both, "messages/partial")[-1][0]["content"] == REPLY


async def test_rejoin_replays_message_events_after_last_event_id(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    first = await collect(
        client.runs.stream(
            tid, ECHO, input={"text": "b"}, stream_mode=["messages"], stream_resumable=True
        )
    )
    run_id = first[0].data["run_id"]
    # Rejoin after the second partial, as a client that lost its connection there.
    cut = [index for index, part in enumerate(first) if part.event == "messages/partial"][1]
    rest = await collect(
        client.runs.join_stream(
            tid, run_id, stream_mode="messages", last_event_id=str(first[cut].id)
        )
    )
    assert [(p.event, p.data) for p in rest] == [(p.event, p.data) for p in first[cut + 1 :]]
    assert rest[-2].event == "messages/partial" and rest[-1].event == "end"


async def test_a_messages_only_stream_still_shows_the_interrupt(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    parts = await collect(
        client.runs.stream(
            thread["thread_id"],
            "refund-approval",
            input={"order_id": "A-1002", "amount": 180.0, "reason": "Item arrived broken"},
            stream_mode="messages",
        )
    )
    assert [part.event for part in parts][-1] == "end"
    (interrupt,) = [
        data["__interrupt__"] for data in events_named(parts, "values") if "__interrupt__" in data
    ]
    assert interrupt[0]["value"]["action"] == "issue_refund"
