"""A CEL map literal's keys come back in the order the spec writes them: the CEL library
hands maps back in a hash order that changes with each process, so an approval's
arguments and a node's outputs listed their keys differently from run to run."""

from __future__ import annotations

import pytest

from plait.engine.spec.expressions import evaluate, written_order

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
