"""Lint skips jsonschema for schemas ``plainly_valid`` vouches for: jsonschema must agree."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from plait.engine.spec.lint.values import plainly_valid

#: Values of any kind, for keywords to get wrong ones.
_ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.floats(allow_nan=True),
    st.sampled_from(["", "object", "nul", "^(x", "uri"]),
    st.lists(st.sampled_from(["object", "string", "a", 1]), max_size=3),
)
_TYPES = st.sampled_from(["array", "boolean", "integer", "null", "number", "object", "string"])
_NAMES = st.sampled_from(["a", "b", "c"])


def _schemas(*, wrong: bool) -> st.SearchStrategy[Any]:
    """Schemas whose keywords have values of the right kind (``wrong``: now and then not)."""

    def nest(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        right = {
            "type": st.one_of(_TYPES, st.lists(_TYPES, max_size=3)),
            "properties": st.dictionaries(_NAMES, inner, max_size=3),
            "required": st.lists(_NAMES, max_size=3),
            "items": inner,
            "additionalProperties": inner,
            "anyOf": st.lists(inner, max_size=2),
            "oneOf": st.lists(inner, max_size=2),
            "allOf": st.lists(inner, max_size=2),
            "enum": st.lists(_ANY_VALUE, max_size=3),
            "const": _ANY_VALUE,
            "default": _ANY_VALUE,
            "examples": st.lists(_ANY_VALUE, max_size=2),
            "title": st.text(max_size=3),
            "description": st.text(max_size=3),
            "format": st.sampled_from(["date", "email", "made-up"]),
            "minimum": st.one_of(st.integers(), st.floats()),
            "maximum": st.one_of(st.integers(), st.floats()),
            "exclusiveMinimum": st.integers(),
            "exclusiveMaximum": st.floats(),
            "minLength": st.integers(0, 3),
            "maxLength": st.integers(0, 3),
            "minItems": st.integers(0, 3),
            "maxItems": st.integers(0, 3),
            "minProperties": st.integers(0, 3),
            "maxProperties": st.integers(0, 3),
            "uniqueItems": st.booleans(),
        }
        if wrong:  # what only jsonschema can judge, and values of the wrong kind
            right |= {
                "minItems": st.one_of(st.integers(-1, 3), st.just(1.0)),
                "pattern": st.sampled_from(["^a", "(x"]),
                "$ref": st.sampled_from(["#", "#/$defs/x"]),
                "$schema": st.just("http://json-schema.org/draft-07/schema#"),
                "dependencies": st.dictionaries(_NAMES, inner, max_size=1),
                "x-custom": _ANY_VALUE,
            }
        pairs = st.sampled_from(sorted(right)).flatmap(
            lambda keyword: st.tuples(
                st.just(keyword),
                st.one_of(right[keyword], _ANY_VALUE) if wrong else right[keyword],
            )
        )
        return st.lists(pairs, max_size=4).map(dict)

    return st.recursive(st.one_of(st.booleans(), st.just({}), st.just({"type": "string"})), nest)


def _jsonschema_accepts(schema: Any) -> bool:
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.exceptions.SchemaError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(_schemas(wrong=True))
def test_a_plainly_valid_schema_passes_jsonschemas_check(schema: Any) -> None:
    if plainly_valid(schema):
        assert _jsonschema_accepts(schema), schema


@settings(max_examples=300, deadline=None)
@given(_schemas(wrong=False))
def test_the_common_keywords_with_values_of_their_kinds(schema: Any) -> None:
    """Repeated names in ``type`` or ``required``, or an empty ``anyOf``, are left to jsonschema
    (which refuses them); otherwise such schemas are plainly valid, and jsonschema agrees."""
    if plainly_valid(schema):
        assert _jsonschema_accepts(schema), schema
    else:
        assert not _jsonschema_accepts(schema), schema


def test_common_structured_output_schemas_are_plainly_valid() -> None:
    schema = {
        "type": "object",
        "properties": {
            "steps": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "verdict": {"type": "string", "enum": ["approve", "revise"]},
            "score": {"type": ["number", "null"], "minimum": 0, "maximum": 1.5},
        },
        "required": ["steps", "verdict"],
        "additionalProperties": False,
    }
    assert plainly_valid(schema)


def test_what_it_cannot_vouch_for_goes_to_jsonschema() -> None:
    for schema in (
        {"required": "steps"},  # invalid: jsonschema explains
        {"type": "objec"},
        {"required": ["a", "a"]},
        {"minItems": -1},
        {"minItems": 1.0},  # valid, but only jsonschema says so
        {"pattern": "^a"},  # a regex: jsonschema checks it
        {"$schema": "http://json-schema.org/draft-07/schema#"},
        {"properties": {"a": {"type": "strin"}}},
    ):
        assert not plainly_valid(schema), schema
