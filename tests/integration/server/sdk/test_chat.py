"""A chat front end's view: the conversation in ``values.messages``, turn after turn."""

from __future__ import annotations

from typing import Any

from langgraph_sdk.client import LangGraphClient


def _said(values: Any) -> list[tuple[str, str]]:
    return [(message["type"], message["content"]) for message in values["messages"]]


async def test_a_chat_keeps_the_conversation_in_values_messages(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    first = await client.runs.wait(
        thread["thread_id"], "chat", input={"messages": [{"role": "user", "content": "Hi"}]}
    )
    assert _said(first) == [
        ("human", "Hi"),
        ("ai", "Hello! I can help with orders, refunds and invoices. What do you need?"),
    ]
    second = await client.runs.wait(
        thread["thread_id"],
        "chat",
        input={"messages": [{"role": "user", "content": "How do refunds work?"}]},
    )
    said = _said(second)
    assert [kind for kind, _ in said] == ["human", "ai", "human", "ai"]
    assert said[2] == ("human", "How do refunds work?")
    assert said[3][1].startswith("Refunds up to 100 are issued at once")
    state = await client.threads.get_state(thread["thread_id"])
    assert _said(state["values"]) == said
