"""llm and agent nodes against the offline scripted model."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from plait.engine.errors import NodeError
from tests.unit.compiler.helpers import chain, make_spec, run, scripted

FNS = "plait_compiler_fns"
TOOLS = {
    "lookup": {"function": f"{FNS}:lookup"},
    "explode": {"function": f"{FNS}:explode"},
}


def _llm(schema: dict[str, Any] | None, *replies: dict[str, Any]) -> Any:
    node: dict[str, Any] = {
        "kind": "llm",
        "model": "m",
        "system": "You answer about {{ state.topic }}.",
        "prompt": "Tell me about {{ state.topic }}",
        "output": "answer",
    }
    if schema is not None:
        node["schema"] = schema
    return make_spec(
        {"ask": node}, chain("ask"), {"topic": {}, "answer": {}}, models={"m": scripted(*replies)}
    )


async def test_llm_returns_the_reply_text() -> None:
    spec = _llm(None, {"when": "about cats", "content": "Cats purr."}, {"content": "no idea"})
    assert (await run(spec, {"topic": "cats"}))["answer"] == "Cats purr."
    assert (await run(spec, {"topic": "dogs"}))["answer"] == "no idea"


SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer"}},
    "required": ["score"],
}


async def test_llm_with_schema_returns_validated_data() -> None:
    spec = _llm(SCHEMA, {"data": {"score": 7}})
    assert (await run(spec, {"topic": "x"}))["answer"] == {"score": 7}


async def test_llm_reply_that_breaks_the_schema_fails_clearly() -> None:
    spec = _llm(SCHEMA, {"data": {"score": "high"}})
    with pytest.raises(NodeError, match=r"node 'ask': .*schema at score: 'high' is not of type"):
        await run(spec, {"topic": "x"})
    spec = _llm(SCHEMA, {"content": "not json"})
    with pytest.raises(NodeError, match=r"node 'ask': the model's reply is not JSON"):
        await run(spec, {"topic": "x"})


def _chat_llm(schema: dict[str, Any] | None, *replies: dict[str, Any]) -> Any:
    node: dict[str, Any] = {
        "kind": "llm",
        "model": "m",
        "system": "Be brief.",
        "prompt": "And {{ state.topic }}?",
        "messages": "chat",
        "output": "answer",
    }
    if schema is not None:
        node["schema"] = schema
    state = {"topic": {}, "answer": {}, "chat": {"type": "messages", "reducer": "add_messages"}}
    return make_spec({"ask": node}, chain("ask"), state, models={"m": scripted(*replies)})


async def test_llm_with_messages_sees_the_conversation_and_adds_to_it() -> None:
    spec = _chat_llm(None, {"content": "first reply"}, {"content": "second reply"})
    history = [HumanMessage("Tell me about cats"), AIMessage("Cats purr.")]
    out = await run(spec, {"topic": "dogs", "chat": history})
    # The scripted model picks its reply by the AI messages it is shown: it saw the history.
    assert out["answer"] == "second reply"
    assert [type(m) for m in out["chat"]] == [HumanMessage, AIMessage, HumanMessage, AIMessage]
    assert [m.content for m in out["chat"][2:]] == ["And dogs?", "second reply"]
    assert not any(isinstance(m, SystemMessage) for m in out["chat"])


async def test_llm_with_messages_and_a_schema_adds_the_data_as_its_reply() -> None:
    spec = _chat_llm(SCHEMA, {"data": {"score": 7}})
    out = await run(spec, {"topic": "x"})
    assert out["answer"] == {"score": 7}
    assert [m.content for m in out["chat"]] == ["And x?", '{"score": 7}']


def _agent(*replies: dict[str, Any], max_iterations: int = 5, messages: bool = False) -> Any:
    node: dict[str, Any] = {"kind": "agent", "agent": "helper", "prompt": "Define {{ state.word }}"}
    node["output"] = "answer"
    state: dict[str, Any] = {"word": {}, "answer": {}}
    if messages:
        node["messages"] = "chat"
        state["chat"] = {"type": "messages", "reducer": "add_messages"}
    return make_spec(
        {"agent": node},
        chain("agent"),
        state,
        models={"m": scripted(*replies)},
        tools=TOOLS,
        agents={
            "helper": {
                "model": "m",
                "system": "Be brief.",
                "tools": ["lookup", "explode"],
                "max_iterations": max_iterations,
            }
        },
    )


async def test_agent_loops_through_tool_calls_and_keeps_the_conversation() -> None:
    spec = _agent(
        {"tool_calls": [{"name": "lookup", "args": {"query": "plait"}}]},
        {"content": "A plait is a braid."},
        messages=True,
    )
    out = await run(spec, {"word": "plait"})
    assert out["answer"] == "A plait is a braid."
    kinds = [type(m) for m in out["chat"]]
    assert kinds == [HumanMessage, AIMessage, ToolMessage, AIMessage]
    assert out["chat"][2].content == "a braid"
    assert not any(isinstance(m, SystemMessage) for m in out["chat"])


async def test_agent_tool_errors_go_back_to_the_model() -> None:
    spec = _agent(
        {"tool_calls": [{"name": "explode", "args": {"reason": "x"}}, {"name": "nope"}]},
        {"content": "recovered"},
        messages=True,
    )
    out = await run(spec, {"word": "w"})
    assert out["answer"] == "recovered"
    errors = [m for m in out["chat"] if isinstance(m, ToolMessage)]
    assert [m.status for m in errors] == ["error", "error"]
    assert "RuntimeError: tool exploded: x" in errors[0].content
    assert "no tool 'nope'" in errors[1].content


async def test_agent_that_never_stops_fails_naming_the_node() -> None:
    spec = _agent({"tool_calls": [{"name": "lookup", "args": {"query": "q"}}]}, max_iterations=3)
    with pytest.raises(NodeError, match=r"node 'agent': .*max_iterations=3"):
        await run(spec, {"word": "w"})
