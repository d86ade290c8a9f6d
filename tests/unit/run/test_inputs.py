"""A run's input against its spec: each problem named in the spec author's words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plait.engine.run.inputs import input_problems
from plait.engine.spec.loader import parse_spec
from plait.engine.spec.models import GraphSpec

SPEC = """
apiVersion: plait/v1
kind: Graph
metadata: {name: typed, version: '1.0.0'}
spec:
  state:
    text: {type: string}
    count: {type: integer}
    price: {type: number}
    ok: {type: boolean}
    extra: {type: object}
    items: {type: list}
    chat: {type: messages, reducer: add_messages}
    anything: {type: any}
  nodes:
    echo: {kind: python, function: "builtins:dict"}
  edges:
    - {from: START, to: echo}
    - {from: echo, to: END}
"""


@pytest.fixture(scope="module")
def spec() -> GraphSpec:
    return parse_spec(SPEC, "typed.yaml", Path("typed.yaml")).spec


def test_values_of_their_declared_types_pass(spec: GraphSpec) -> None:
    good: dict[str, Any] = {
        "text": "hi",
        "count": 3,
        "price": 3,  # an integer is a number
        "ok": False,
        "extra": {"a": 1},
        "items": [1, "two"],
        "chat": "a message as text",
        "anything": None,
    }
    assert input_problems(spec, good) == []
    assert input_problems(spec, {}) == []


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        (
            "count",
            True,
            "input field count is a boolean (True); typed's state declares it an integer",
        ),
        ("count", 2.5, "input field count is a number (2.5); typed's state declares it an integer"),
        ("text", 7, "input field text is an integer (7); typed's state declares it a string"),
        (
            "items",
            {"a": 1},
            "input field items is an object ({'a': 1}); typed's state declares it a list",
        ),
        ("ok", "yes", "input field ok is a string ('yes'); typed's state declares it a boolean"),
        (
            "extra",
            None,
            "input field extra is null; typed's state declares it an object "
            "(leave it out: its default)",
        ),
    ],
)
def test_a_value_of_another_type_is_named(
    spec: GraphSpec, field: str, value: Any, words: str
) -> None:
    assert input_problems(spec, {field: value}) == [words]


def test_a_long_value_is_shortened_and_every_problem_is_told(spec: GraphSpec) -> None:
    problems = input_problems(spec, {"text": ["x" * 100], "count": "many"})
    assert problems == [
        "input field count is a string ('many'); typed's state declares it an integer",
        f"input field text is a list ({repr(['x' * 100])[:37]}...); "
        "typed's state declares it a string",
    ]


def test_unknown_fields_come_first_and_alone(spec: GraphSpec) -> None:
    assert input_problems(spec, {"nope": 1, "count": "x"}) == [
        "unknown input field nope; "
        "typed accepts: text, count, price, ok, extra, items, chat, anything"
    ]
