"""subgraph: nested run with input mapping, output as result, interrupts inside."""

from __future__ import annotations

from typing import Any

import pytest

from plait.engine.compiler import CompileError, compile_spec
from plait.engine.spec.registry import SpecRegistry
from tests.unit.compiler.helpers import Runner, chain, make_spec

ECHO = "plait_compiler_fns:async_echo"


def _child(version: str = "1.0.0", suffix: str = "!") -> Any:
    return make_spec(
        {
            "ask": {"kind": "approval", "action": "send", "arguments": "{'text': state.text}"},
            "shout": {
                "kind": "python",
                "function": ECHO,
                "args": {"value": f"state.text + '{suffix}'"},
                "output": "text",
            },
        },
        chain("ask", "shout"),
        {"text": {}, "scratch": {"default": 0}},
        name="child",
        version=version,
        output=["text"],
    )


def _parent() -> Any:
    return make_spec(
        {
            "sub": {
                "kind": "subgraph",
                "ref": "child@1.0.0",
                "input": {"text": "state.words"},
                "writes": {"final": "result.text"},
            }
        },
        chain("sub"),
        {"words": {}, "final": {}},
        name="parent",
    )


async def test_subgraph_interrupt_reaches_the_parent_and_resumes_the_child() -> None:
    registry = SpecRegistry([_child()])
    runner = Runner(_parent(), registry)
    parked = await runner.start({"words": "hi"})
    (pending,) = parked["__interrupt__"]
    assert pending.value["node"] == "ask"
    assert pending.value["arguments"] == {"text": "hi"}
    snapshot = await runner.graph.aget_state(runner.config, subgraphs=True)
    (task,) = snapshot.tasks
    assert task.name == "sub"
    assert task.state is not None and task.state.values == {"text": "hi", "scratch": 0}
    out = await runner.resume({"decision": "approve"})
    assert out == {"words": "hi", "final": "hi!"}


async def test_cache_key_follows_the_child_digest() -> None:
    parent = _parent()
    first = compile_spec(parent, SpecRegistry([_child()]))
    assert compile_spec(parent, SpecRegistry([_child()])) is first
    changed = compile_spec(parent, SpecRegistry([_child(suffix="?")]))
    assert changed is not first


async def test_missing_ref_is_a_compile_error() -> None:
    with pytest.raises(CompileError, match=r"no spec 'child@1.0.0' is loaded"):
        compile_spec(_parent(), SpecRegistry([_child(version="2.0.0")]))
    with pytest.raises(CompileError, match=r"no spec registry"):
        compile_spec(_parent())


async def test_map_over_a_subgraph_runs_each_item_detached() -> None:
    child = make_spec(
        {
            "up": {
                "kind": "python",
                "function": ECHO,
                "args": {"value": "state.n * 10"},
                "output": "n",
            }
        },
        chain("up"),
        {"n": {}},
        name="times-ten",
    )
    parent = make_spec(
        {
            "m": {
                "kind": "map",
                "items": "state.ns",
                "do": {"kind": "subgraph", "ref": "times-ten@1.0.0", "input": {"n": "item"}},
                "writes": {"out": "result.map(r, r.n)"},
            }
        },
        chain("m"),
        {"ns": {}, "out": {}},
    )
    out = await Runner(parent, SpecRegistry([child])).start({"ns": [1, 2, 3]})
    assert out["out"] == [10, 20, 30]

    # As Plait runs it (runner.py, workers): durability "sync", which the items' children,
    # run with no checkpointer, must not inherit (LangGraph waits there for a save that is
    # never made: AttributeError '_put_checkpoint_fut').
    durable = Runner(parent, SpecRegistry([child]), thread="durable")
    out = dict(await durable.graph.ainvoke({"ns": [4, 5]}, durable.config, durability="sync"))
    assert out["out"] == [40, 50]
