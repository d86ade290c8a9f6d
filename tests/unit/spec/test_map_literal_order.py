"""A CEL map literal's keys come back in the order the spec writes them: the CEL library
hands maps back in a hash order that changes with each process, so an approval's
arguments and a node's outputs listed their keys differently from run to run."""

from __future__ import annotations

import pytest

from plait.engine.spec.expressions import ExpressionError, evaluate, written_order

KEYS = ["order_id", "amount", "sku", "reason", "customer", "currency", "note", "zone"]
STATE = {key: f"{key} value" for key in KEYS}


def test_a_map_literal_keeps_its_keys_in_the_written_order() -> None:
    # Eight keys: the library's order matches the written one once in 40,320 processes.
    source = "{" + ", ".join(f'"{key}": state.{key}' for key in KEYS) + "}"
    assert list(evaluate(source, {"state": STATE})) == KEYS
    backwards = "{" + ", ".join(f"'{key}': state.{key}" for key in reversed(KEYS)) + "}"
    assert list(evaluate(backwards, {"state": STATE})) == KEYS[::-1]


def test_a_nested_map_literal_keeps_its_order_too() -> None:
    inner = ", ".join(f'"{key}": {index}' for index, key in enumerate(KEYS))
    source = '{"refund": {' + inner + '}, "items": [1, {"b": 2, "a": 1}], "ok": state.sku != ""}'
    value = evaluate(source, {"state": STATE})
    assert list(value) == ["refund", "items", "ok"]
    assert list(value["refund"]) == KEYS
    assert value["items"] == [1, {"a": 1, "b": 2}]  # a literal inside a list: as CEL gives it


@pytest.mark.parametrize(
    "source",
    ["state.sku", "1 + 2", '{"a": 1}.size()', 'true ? {"a": 1} : {"b": 2}', '[{"a": 1}]'],
)
def test_only_an_expression_that_is_a_map_literal_is_reordered(source: str) -> None:
    assert written_order(source) is None


def test_keys_that_are_not_written_as_strings_follow_the_written_ones() -> None:
    source = '{"b": 1, 7: 2, "a": 3, r"raw": 4}'
    assert written_order(source) == {"b": None, "a": None}
    assert list(evaluate(source, {}))[:2] == ["b", "a"]
    assert set(evaluate(source, {})) == {"b", 7, "a", "raw"}


def test_a_map_passed_through_keeps_the_order_it_came_in() -> None:
    # `writes: {assessment: result}`: the State tab and the outcome list the keys as the
    # node's result has them, not in the library's order of the process.
    inner = {key: index for index, key in enumerate(reversed(KEYS))}
    result = {key: inner for key in KEYS}
    context = {"result": result, "state": {"plan": result}}
    for source in ["result", "state.plan", "  result . zone ", 'state["plan"]["zone"]']:
        value = evaluate(source, context)
        expected = result if "zone" not in source else inner
        assert value == expected
        assert list(value) == list(expected)
    assert [list(value) for value in evaluate("result", context).values()] == [KEYS[::-1]] * 8


def test_a_field_path_inside_a_map_literal_keeps_the_order_of_what_it_names() -> None:
    inner = {key: index for index, key in enumerate(KEYS)}
    context = {"result": inner, "state": {"inner": inner}}
    value = evaluate('{"b": result, "a": {"c": state.inner}}', context)
    assert list(value) == ["b", "a"]
    assert list(value["b"]) == KEYS
    assert list(value["a"]["c"]) == KEYS


def test_a_path_to_nothing_still_gets_the_librarys_error() -> None:
    with pytest.raises(ExpressionError, match="no such key 'zz'"):
        evaluate("state.a.zz", {"state": {"a": {"b": 1}}})
    with pytest.raises(ExpressionError, match="No such overload"):
        evaluate("state.a.b.c", {"state": {"a": {"b": 1}}})
