"""An agent's model routes and its context policy, against the offline scripted model."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from plait.engine.compiler.context_window import SUMMARY_HEADING
from plait.engine.governance.audit import AUDIT_KEY, InMemoryAuditStore
from tests.unit.compiler.helpers import Runner, chain, make_spec, scripted

FNS = "plait_compiler_fns"


def _spec(agent: dict[str, Any], models: dict[str, Any], **node: Any) -> Any:
    return make_spec(
        {"work": {"kind": "agent", "agent": "triage", "prompt": "{{ state.task }}", **node}},
        chain("work"),
        {"task": {}, "risk": {}, "answer": {}, "chat": {"reducer": "add_messages"}},
        models=models,
        agents={"triage": agent},
        tools={"lookup": {"function": f"{FNS}:lookup"}},
        audit={"model_calls": True},
    )


async def _run(spec: Any, payload: dict[str, Any]) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """The output, the audited model calls and the custom events of one run."""
    runner = Runner(spec)
    store = InMemoryAuditStore()
    runner.config["configurable"][AUDIT_KEY] = store
    custom: list[Any] = []
    async for mode, chunk in runner.graph.astream(
        payload, runner.config, stream_mode=["custom", "values"]
    ):
        if mode == "custom":
            custom.append(chunk)
    out = await runner.state()
    calls = [record.detail for record in store.records if record.kind == "model_call"]
    return out, calls, custom


async def test_a_route_sends_high_risk_work_to_the_stronger_model() -> None:
    routes = [{"when": "state.risk == 'high'", "model": "strong"}]
    spec = _spec(
        {"model": "small", "routes": routes},
        {"small": scripted({"content": "small says"}), "strong": scripted({"content": "strong"})},
        output="answer",
    )
    out, calls, events = await _run(spec, {"task": "refund", "risk": "high"})
    assert out["answer"] == "strong"
    assert [call["model"] for call in calls] == ["strong"]
    [route] = [e for e in events if e.get("plait") == "model_route"]
    assert route == {
        "plait": "model_route",
        "node": "work",
        "model": "strong",
        "when": "state.risk == 'high'",
    }

    out, calls, events = await _run(spec, {"task": "refund", "risk": "low"})
    assert out["answer"] == "small says"
    assert not [e for e in events if e.get("plait") == "model_route"]


async def test_a_route_on_usage_switches_model_within_the_loop() -> None:
    """Past 100 tokens in this step, the next call goes to the long-context tier."""
    routes = [{"when": "usage.tokens > 100", "model": "long"}]
    lookup = {"tool_calls": [{"name": "lookup", "args": {"query": "plait"}}]}
    spec = _spec(
        {"model": "small", "tools": ["lookup"], "routes": routes},
        {
            "small": scripted({**lookup, "usage": {"input_tokens": 90, "output_tokens": 20}}),
            # The long model's script: the conversation already holds one reply.
            "long": scripted({"content": "unused"}, {"content": "from the long model"}),
        },
        output="answer",
    )
    out, calls, _ = await _run(spec, {"task": "what is a plait?"})
    assert out["answer"] == "from the long model"
    assert [call["model"] for call in calls] == ["small", "long"]


def _long_history() -> list[Any]:
    turns: list[Any] = []
    for n in range(6):
        turns += [HumanMessage(f"question {n} " + "words " * 40), AIMessage(f"answer {n}")]
    return turns


async def test_trim_sends_the_system_prompt_and_the_latest_turns_only() -> None:
    agent = {
        "model": "m",
        "system": "You are terse.",
        "context": {"max_tokens": 40, "strategy": "trim"},
    }
    spec = _spec(agent, {"m": scripted({"when": "latest", "content": "ok"})}, messages="chat")
    out, [call], _ = await _run(spec, {"task": "the latest question", "chat": _long_history()})
    seen = call["messages"]
    assert seen[0] == {"type": "system", "content": "You are terse."}
    assert [m["content"] for m in seen[1:]] == ["the latest question"]
    # The state keeps the whole conversation: only what the model is sent is trimmed.
    assert len(out["chat"]) == 6 * 2 + 2


async def test_summarize_replaces_the_dropped_turns_by_a_summary() -> None:
    agent = {
        "model": "m",
        "system": "You are terse.",
        "context": {"max_tokens": 40, "strategy": "summarize", "summary_model": "sum"},
    }
    models = {
        "m": scripted({"when": "latest", "content": "ok"}),
        "sum": scripted({"content": "Six questions about braids, all answered."}),
    }
    spec = _spec(agent, models, messages="chat")
    _, calls, _ = await _run(spec, {"task": "the latest question", "chat": _long_history()})
    summary_call, answer_call = calls
    assert summary_call["model"] == "sum"
    assert "question 0" in summary_call["messages"][1]["content"]
    system = answer_call["messages"][0]["content"]
    assert system == (
        f"You are terse.\n\n{SUMMARY_HEADING}\nSix questions about braids, all answered."
    )
    assert [m["content"] for m in answer_call["messages"][1:]] == ["the latest question"]


async def test_an_inline_agent_node_routes_and_trims_like_a_named_agent() -> None:
    """`routes` and `context` on the node override (or stand for) the named agent's."""
    spec = make_spec(
        {
            "work": {
                "kind": "agent",
                "model": "small",
                "prompt": "{{ state.task }}",
                "messages": "chat",
                "routes": [{"when": "state.risk == 'high'", "model": "strong"}],
                "context": {"max_tokens": 40},
                "output": "answer",
            }
        },
        chain("work"),
        {"task": {}, "risk": {}, "answer": {}, "chat": {"reducer": "add_messages"}},
        models={
            "small": scripted({"content": "small"}),
            "strong": scripted({"when": "latest", "content": "strong"}),
        },
        audit={"model_calls": True},
    )
    payload = {"task": "the latest question", "risk": "high", "chat": _long_history()}
    out, [call], _ = await _run(spec, payload)
    assert out["answer"] == "strong"
    assert call["model"] == "strong" and call["agent_role"] == "work"
    assert [m["content"] for m in call["messages"]] == ["the latest question"]


async def test_an_llm_node_takes_its_route_for_its_one_call() -> None:
    routes = [{"when": "state.risk == 'high'", "model": "strong"}]
    spec = make_spec(
        {
            "answer": {
                "kind": "llm",
                "model": "small",
                "prompt": "{{ state.task }}",
                "routes": routes,
                "output": "answer",
            }
        },
        chain("answer"),
        {"task": {}, "risk": {}, "answer": {}},
        models={"small": scripted({"content": "small"}), "strong": scripted({"content": "strong"})},
        audit={"model_calls": True},
    )

    high, calls, events = await _run(spec, {"task": "refund", "risk": "high"})
    low, low_calls, low_events = await _run(spec, {"task": "refund", "risk": "low"})

    assert (high["answer"], [call["model"] for call in calls]) == ("strong", ["strong"])
    assert [e["model"] for e in events if e.get("plait") == "model_route"] == ["strong"]
    assert (low["answer"], [call["model"] for call in low_calls]) == ("small", ["small"])
    assert not [e for e in low_events if e.get("plait") == "model_route"]
