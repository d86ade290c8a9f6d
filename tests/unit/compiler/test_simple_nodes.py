"""python, tool, router and parallel nodes; writes and the CEL roots."""

from __future__ import annotations

import pytest

from plait.engine.errors import NodeError
from tests.unit.compiler.helpers import Runner, chain, make_spec, run

FNS = "plait_compiler_fns"


async def test_python_node_with_cel_args_and_writes() -> None:
    spec = make_spec(
        {
            "add": {
                "kind": "python",
                "function": f"{FNS}:add",
                "args": {"a": "state.x", "b": "input.y"},
                "output": "sum",
                "writes": {"label": "'sum=' + string(result) + ' for ' + run.graph"},
            }
        },
        chain("add"),
        {"x": {"default": 2}, "y": {}, "sum": {}, "label": {}},
        name="python-args",
    )
    out = await run(spec, {"y": 40})
    assert out["sum"] == 42
    assert out["label"] == "sum=42 for python-args"


async def test_python_node_without_args_gets_the_public_state() -> None:
    spec = make_spec(
        {
            "count": {"kind": "python", "function": f"{FNS}:count_fields", "output": "n"},
            "gate": {"kind": "router", "label": "'a'", "labels": ["a"]},
        },
        [
            {"from": "START", "to": "gate"},
            {"from": "gate", "route": "result", "to": {"a": "count"}},
            {"from": "count", "to": "END"},
        ],
        {"a": {}, "b": {}, "n": {}},
    )
    # a, b, n: the private result channel of `gate` is not passed to the function.
    assert (await run(spec))["n"] == 3


async def test_async_python_function_is_awaited() -> None:
    spec = make_spec(
        {
            "e": {
                "kind": "python",
                "function": f"{FNS}:async_echo",
                "args": {"value": "[1, 2]"},
                "output": "out",
            }
        },
        chain("e"),
        {"out": {}},
    )
    assert (await run(spec))["out"] == [1, 2]


async def test_tool_node_calls_the_tool_with_cel_args() -> None:
    spec = make_spec(
        {"look": {"kind": "tool", "tool": "lookup", "args": {"query": "state.q"}, "output": "a"}},
        chain("look"),
        {"q": {}, "a": {}},
        tools={"lookup": {"function": f"{FNS}:lookup"}},
    )
    assert (await run(spec, {"q": "plait"}))["a"] == "a braid"


async def test_arguments_given_as_written_are_not_evaluated() -> None:
    args = {
        "cel": "state.q + '!'",
        "number": 0.3,
        "count": 3,
        "flag": True,
        "nothing": None,
        "text": {"value": "hello world"},
        "looks_like_cel": {"value": "state.q"},
        "nested": {"value": {"repository": "/srv/repo", "paths": ["a", "b"]}},
    }
    spec = make_spec(
        {"c": {"kind": "python", "function": f"{FNS}:collect", "args": args, "output": "out"}},
        chain("c"),
        {"q": {}, "out": {}},
    )
    assert (await run(spec, {"q": "hi"}))["out"] == {
        "cel": "hi!",
        "number": 0.3,
        "count": 3,
        "flag": True,
        "nothing": None,
        "text": "hello world",
        "looks_like_cel": "state.q",
        "nested": {"repository": "/srv/repo", "paths": ["a", "b"]},
    }


async def test_a_literal_argument_is_fresh_for_every_call() -> None:
    spec = make_spec(
        {
            "t": {
                "kind": "python",
                "function": f"{FNS}:append_one",
                "args": {"items": {"value": ["a", "b"]}},
                "output": "n",
            }
        },
        chain("t"),
        {"n": {}},
    )
    runner = Runner(spec)  # one compiled graph, two runs
    assert (await runner.start())["n"] == 3
    runner.config["configurable"]["thread_id"] = "another"
    assert (await runner.start())["n"] == 3


async def test_router_result_is_the_label_and_unknown_labels_fail() -> None:
    nodes = {
        "r": {"kind": "router", "label": "state.pick", "labels": ["x", "y"], "output": "picked"}
    }
    spec = make_spec(nodes, chain("r"), {"pick": {}, "picked": {}})
    assert (await run(spec, {"pick": "y"}))["picked"] == "y"
    with pytest.raises(NodeError, match=r"node 'r': label 'z' is not one of the declared labels"):
        await run(spec, {"pick": "z"})


async def test_expression_errors_name_the_node() -> None:
    spec = make_spec(
        {"p": {"kind": "python", "function": f"{FNS}:async_echo", "args": {"value": "state.nope"}}},
        chain("p"),
        {"a": {}},
    )
    with pytest.raises(NodeError, match=r"node 'p': ExpressionError: .*nope"):
        await run(spec)


async def test_parallel_runs_branches_then_the_join_once() -> None:
    echo = f"{FNS}:async_echo"
    spec = make_spec(
        {
            "fan": {"kind": "parallel", "branches": ["left", "right"], "join": "join"},
            "left": {
                "kind": "python",
                "function": echo,
                "args": {"value": "'L'"},
                "output": "seen",
            },
            "right": {
                "kind": "python",
                "function": echo,
                "args": {"value": "'R'"},
                "output": "seen",
            },
            "join": {
                "kind": "python",
                "function": echo,
                "args": {"value": "size(state.seen)"},
                "output": "joined",
            },
        },
        [
            {"from": "START", "to": "fan"},
            # Declared branch -> join edges are implied: the join must still run once.
            {"from": "left", "to": "join"},
            {"from": "right", "to": "join"},
            {"from": "join", "to": "END"},
        ],
        {"seen": {"reducer": "append"}, "joined": {"reducer": "append"}},
    )
    out = await run(spec)
    assert sorted(out["seen"]) == ["L", "R"]
    assert out["joined"] == [2]


async def test_run_root_comes_from_the_config() -> None:
    spec = make_spec(
        {
            "p": {
                "kind": "python",
                "function": f"{FNS}:async_echo",
                "args": {"value": "run"},
                "output": "r",
            }
        },
        chain("p"),
        {"r": {}},
        name="run-root",
    )
    runner = Runner(spec, thread="thread-9")
    runner.config["configurable"]["run_id"] = "11111111-2222-3333-4444-555555555555"
    out = await runner.start()
    assert out["r"] == {
        "id": "11111111-2222-3333-4444-555555555555",
        "thread_id": "thread-9",
        "graph": "run-root",
        "version": "1.0.0",
    }
