"""State channels: reducers, defaults, input/output schemas, private channels."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.errors import InvalidUpdateError

from tests.unit.compiler.helpers import Runner, make_spec, run

FN = "plait_compiler_fns:async_echo"


def _fan_out(reducer: str, first: str, second: str, default: Any = None) -> Any:
    """Two parallel python nodes both writing `value` (CEL) into `f`."""
    field: dict[str, Any] = {"reducer": reducer}
    if default is not None:
        field["default"] = default
    return make_spec(
        {
            "a": {"kind": "python", "function": FN, "args": {"value": first}, "output": "f"},
            "b": {"kind": "python", "function": FN, "args": {"value": second}, "output": "f"},
        },
        [
            {"from": "START", "to": "a"},
            {"from": "START", "to": "b"},
            {"from": "a", "to": "END"},
            {"from": "b", "to": "END"},
        ],
        {"f": field},
    )


@pytest.mark.parametrize(
    ("reducer", "first", "second", "default", "expected"),
    [
        ("append", "1", "2", None, [1, 2]),
        ("extend", "[1, 2]", "[3]", [0], [0, 1, 2, 3]),
        ("merge", "{'a': 1}", "{'b': 2}", {"a": 0, "c": 3}, {"a": 1, "b": 2, "c": 3}),
        ("sum", "2", "3", 10, 15),
        ("max", "2", "7", 5, 7),
        ("min", "2", "7", 5, 2),
        ("union", "[1, 2, {'k': 1}]", "[2, 3, {'k': 1}]", [3], [3, 1, 2, {"k": 1}]),
    ],
)
async def test_combining_reducers_accept_parallel_writers(
    reducer: str, first: str, second: str, default: Any, expected: Any
) -> None:
    out = await run(_fan_out(reducer, first, second, default))
    assert out["f"] == expected


async def test_max_and_sum_start_from_nothing_without_default() -> None:
    assert (await run(_fan_out("max", "4", "9")))["f"] == 9
    assert (await run(_fan_out("sum", "4", "9")))["f"] == 13


async def test_replace_refuses_two_writers_in_one_step() -> None:
    with pytest.raises(InvalidUpdateError):
        await run(_fan_out("replace", "1", "2"))


async def test_add_messages_appends_and_replaces_by_id() -> None:
    spec = make_spec(
        {
            "a": {
                "kind": "python",
                "function": FN,
                "args": {"value": "[{'role': 'user', 'content': 'hi', 'id': 'm1'}]"},
                "output": "msgs",
            },
            "b": {
                "kind": "python",
                "function": FN,
                "args": {"value": "[{'role': 'user', 'content': 'edited', 'id': 'm1'}]"},
                "output": "msgs",
            },
        },
        [{"from": "START", "to": "a"}, {"from": "a", "to": "b"}, {"from": "b", "to": "END"}],
        {"msgs": {"type": "messages", "reducer": "add_messages"}},
    )
    out = await run(spec, {"msgs": [{"role": "user", "content": "first", "id": "m0"}]})
    assert [(m.id, m.content) for m in out["msgs"]] == [("m0", "first"), ("m1", "edited")]


async def test_defaults_are_visible_before_any_write_and_per_run() -> None:
    spec = make_spec(
        {
            "a": {
                "kind": "python",
                "function": FN,
                "args": {"value": "state.items + [state.n]"},
                "output": "items",
            }
        },
        [{"from": "START", "to": "a"}, {"from": "a", "to": "END"}],
        {"items": {"type": "list", "default": [1]}, "n": {"default": 5}, "unset": {}},
    )
    first = await run(spec)
    assert first == {"items": [1, 5], "n": 5, "unset": None}
    # The default list is not shared between runs.
    assert (await run(spec, {"n": 6}))["items"] == [1, 6]


async def test_input_and_output_schemas_filter_fields_and_hide_private_channels() -> None:
    spec = make_spec(
        {
            "r": {"kind": "router", "label": "'go'", "labels": ["go"], "max_visits": 2},
            "p": {
                "kind": "python",
                "function": FN,
                "args": {"value": "state.q + '!'"},
                "output": "answer",
            },
        },
        [
            {"from": "START", "to": "r"},
            {"from": "r", "route": "result", "to": {"go": "p"}},
            {"from": "p", "to": "END"},
        ],
        {"q": {}, "secret": {"default": "s"}, "answer": {}},
        input=["q"],
        output=["answer"],
    )
    runner = Runner(spec)
    assert await runner.start({"q": "hi", "secret": "injected"}) == {"answer": "hi!"}
    # `secret` is not an input field: its default stands.
    # The thread's state holds every spec field and none of the private channels.
    assert await runner.state() == {"q": "hi", "secret": "s", "answer": "hi!"}
