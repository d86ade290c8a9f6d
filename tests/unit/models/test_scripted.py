"""The offline scripted chat model."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool

from plait.engine.models.scripted import ScriptedChatModel
from plait.engine.spec.models import ScriptedResponse


def _model(*replies: dict[str, Any]) -> ScriptedChatModel:
    return ScriptedChatModel(script=[ScriptedResponse.model_validate(r) for r in replies])


def _conversation(ai_turns: int, last: str = "go on") -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage("be brief"), HumanMessage("start")]
    for turn in range(ai_turns):
        messages += [AIMessage(f"reply {turn}"), HumanMessage("next")]
    messages[-1] = HumanMessage(last)
    return messages


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


# ---------------------------------------------------------------------- reply choice


def test_replies_in_order_by_number_of_ai_messages() -> None:
    model = _model({"content": "first"}, {"content": "second"}, {"content": "third"})
    assert [model.invoke(_conversation(turns)).content for turns in range(3)] == [
        "first",
        "second",
        "third",
    ]


def test_last_reply_repeats_past_the_end() -> None:
    model = _model({"content": "first"}, {"content": "last"})
    assert model.invoke(_conversation(2)).content == "last"
    assert model.invoke(_conversation(7)).content == "last"


def test_same_input_gives_same_reply_on_every_call() -> None:
    # A resumed run sends the same conversation again and must get the same reply.
    model = _model({"content": "first"}, {"content": "second"})
    conversation = _conversation(1)
    assert model.invoke(conversation).content == "second"
    assert model.invoke(conversation).content == "second"
    assert model.invoke(_conversation(0)).content == "first"


def test_when_reply_wins_over_order_when_it_matches_the_last_message() -> None:
    model = _model(
        {"content": "in order"},
        {"when": r"(?i)refund", "content": "refund policy"},
    )
    assert model.invoke(_conversation(0, last="I want a REFUND")).content == "refund policy"
    assert model.invoke(_conversation(0, last="hello")).content == "in order"


def test_when_matches_only_the_last_message() -> None:
    model = _model({"content": "in order"}, {"when": "refund", "content": "refund policy"})
    messages = [HumanMessage("refund please"), AIMessage("ok"), HumanMessage("thanks")]
    assert model.invoke(messages).content == "in order"


def test_when_replies_do_not_count_as_ordered_replies() -> None:
    model = _model({"when": "x", "content": "matched"}, {"content": "a"}, {"content": "b"})
    assert model.invoke(_conversation(1)).content == "b"


def test_first_matching_when_wins() -> None:
    model = _model({"when": "a", "content": "one"}, {"when": "ab", "content": "two"})
    assert model.invoke([HumanMessage("ab")]).content == "one"


def test_no_reply_for_input_is_a_clear_error() -> None:
    model = _model({"when": "yes", "content": "matched"})
    with pytest.raises(ValueError, match="no `when` matched"):
        model.invoke([HumanMessage("no")])


def test_invalid_regex_is_rejected_when_built() -> None:
    with pytest.raises(ValueError, match="reply 0: `when` is not a valid regex"):
        _model({"when": "(", "content": "x"})


def test_empty_script_is_rejected() -> None:
    with pytest.raises(ValueError, match="at least one reply"):
        ScriptedChatModel(script=[])


def test_data_reply_is_json_content() -> None:
    model = _model({"data": {"score": 3, "tags": ["a"]}})
    reply = model.invoke("rate it")
    assert isinstance(reply.content, str)
    assert json.loads(reply.content) == {"score": 3, "tags": ["a"]}


# ---------------------------------------------------------------------- tool calls and usage


def test_tool_calls_become_real_tool_calls_with_stable_ids() -> None:
    model = _model(
        {
            "tool_calls": [
                {"name": "lookup", "args": {"query": "x"}},
                {"name": "lookup", "args": {"query": "y"}, "id": "given"},
            ]
        },
        {"content": "done"},
    )
    reply = model.invoke(_conversation(0))
    assert reply.tool_calls == [
        {"name": "lookup", "args": {"query": "x"}, "id": "call_0_0_0", "type": "tool_call"},
        {"name": "lookup", "args": {"query": "y"}, "id": "given", "type": "tool_call"},
    ]
    assert reply.response_metadata["finish_reason"] == "tool_calls"
    assert model.invoke(_conversation(0)).tool_calls == reply.tool_calls


def test_repeated_tool_call_reply_gets_new_ids_each_turn() -> None:
    model = _model({"tool_calls": [{"name": "lookup", "args": {"query": "x"}}]})
    first = model.invoke(_conversation(0)).tool_calls[0]["id"]
    later = model.invoke(_conversation(3)).tool_calls[0]["id"]
    assert first != later


def test_given_usage_is_reported() -> None:
    model = _model({"content": "hi", "usage": {"input_tokens": 12, "output_tokens": 5}})
    assert model.invoke("x").usage_metadata == {
        "input_tokens": 12,
        "output_tokens": 5,
        "total_tokens": 17,
    }


def test_usage_is_estimated_at_four_characters_per_token() -> None:
    model = _model({"content": "a" * 9})
    usage = model.invoke([HumanMessage("b" * 40)]).usage_metadata
    assert usage == {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13}


def test_bind_tools_returns_a_runnable_that_replays_the_script() -> None:
    model = _model({"tool_calls": [{"name": "lookup", "args": {"query": "q"}}]}, {"content": "ok"})
    bound = model.bind_tools([lookup], tool_choice="auto")
    first = bound.invoke([HumanMessage("find q")])
    assert first.tool_calls[0]["name"] == "lookup"
    result = lookup.invoke(first.tool_calls[0])
    assert isinstance(result, ToolMessage)
    final = bound.invoke([HumanMessage("find q"), first, result])
    assert final.content == "ok"


def test_bind_tools_rejects_what_a_provider_would() -> None:
    with pytest.raises(ValueError):
        _model({"content": "x"}).bind_tools([object()])  # type: ignore[list-item]


# ---------------------------------------------------------------------- streaming


async def test_astream_yields_tokens_and_concatenates_to_ainvoke() -> None:
    model = _model(
        {
            "content": "Looking  that up now.",
            "tool_calls": [
                {"name": "lookup", "args": {"query": "x"}},
                {"name": "lookup", "args": {"query": "y"}},
            ],
        }
    )
    messages = _conversation(0)
    chunks = [chunk async for chunk in model.astream(messages)]
    invoked = await model.ainvoke(messages)

    texts = [chunk.content for chunk in chunks if chunk.content]
    assert texts == ["Looking  ", "that ", "up ", "now."]
    assert chunks[-1].usage_metadata == invoked.usage_metadata
    assert all(chunk.usage_metadata is None for chunk in chunks[:-1])

    total = chunks[0]
    for chunk in chunks[1:]:
        total += chunk
    assert isinstance(total, AIMessageChunk)
    assert total.content == invoked.content
    assert total.tool_calls == invoked.tool_calls
    assert total.usage_metadata == invoked.usage_metadata
    assert total.response_metadata["finish_reason"] == "tool_calls"


def test_stream_of_data_reply_concatenates_to_the_json() -> None:
    model = _model({"data": {"answer": "forty two", "n": 42}})
    text = "".join(str(chunk.content) for chunk in model.stream("q"))
    assert json.loads(text) == {"answer": "forty two", "n": 42}


async def test_ainvoke_uses_streaming_path_with_streaming_callbacks() -> None:
    # LangGraph's `messages` stream mode makes ainvoke stream; the result must not change.
    model = _model({"content": "one two", "tool_calls": [{"name": "lookup", "args": {}}]})
    plain = await model.ainvoke("hi")
    streamed = await model.ainvoke("hi", stream=True)
    assert (streamed.content, streamed.tool_calls, streamed.usage_metadata) == (
        plain.content,
        plain.tool_calls,
        plain.usage_metadata,
    )
