"""The compiled graph on the real Postgres checkpointer, one saver per run."""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.types import Command

from plait.engine.compiler import compile_spec
from plait.engine.spec.registry import SpecRegistry
from plait.engine.store.checkpointer import new_checkpointer
from plait.engine.store.pool import Pool
from tests.unit.compiler.helpers import chain, make_spec

ECHO = "plait_compiler_fns:async_echo"


async def test_nested_approval_resumes_on_a_new_saver(pool: Pool) -> None:
    child = make_spec(
        {
            "ask": {"kind": "approval", "action": "publish", "arguments": "{'t': state.text}"},
            "done": {
                "kind": "python",
                "function": ECHO,
                "args": {"value": "state.text + ' (approved)'"},
                "output": "text",
            },
        },
        [
            {"from": "START", "to": "ask"},
            {
                "from": "ask",
                "route": "result.decision",
                "to": {"approve": "done"},
                "default": "END",
            },
            {"from": "done", "to": "END"},
        ],
        {"text": {}},
        name="pg-child",
    )
    parent = make_spec(
        {
            "draft": {
                "kind": "python",
                "function": ECHO,
                "args": {"value": "'draft of ' + state.topic"},
                "output": "text",
                "max_visits": 1,
            },
            "publish": {
                "kind": "subgraph",
                "ref": "pg-child@1.0.0",
                "writes": {"text": "result.text"},
            },
        },
        chain("draft", "publish"),
        {"topic": {}, "text": {}},
        name="pg-parent",
    )
    compiled = compile_spec(parent, SpecRegistry([child]))
    config: dict[str, Any] = {"configurable": {"thread_id": str(uuid.uuid4())}}

    parked = await compiled.bind(new_checkpointer(pool)).ainvoke({"topic": "tea"}, config)
    assert parked["__interrupt__"][0].value["arguments"] == {"t": "draft of tea"}

    # A different saver, as a different worker would have.
    graph = compiled.bind(new_checkpointer(pool))
    out = await graph.ainvoke(Command(resume={"decision": "approve"}), config)
    assert out == {"topic": "tea", "text": "draft of tea (approved)"}
    assert (await graph.aget_state(config)).values == out
