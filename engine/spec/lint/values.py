"""Values the schema cannot check alone: defaults, reducers, JSON Schemas, examples."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait.engine.spec.errors import short_repr
from plait.engine.spec.expressions import ExpressionError, compile_regex
from plait.engine.spec.lint.context import LintContext, did_you_mean, known, node_pointer, pointer
from plait.engine.spec.models import LlmNode, MapNode

#: Python types a state field's ``default`` may have, by the field's ``type``.
_DEFAULT_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "list": (list,),
    "messages": (list,),
}

#: Field types each reducer can combine (``any`` always fits).
_REDUCER_TYPES: dict[str, tuple[str, ...]] = {
    "append": ("list",),
    "extend": ("list",),
    "union": ("list",),
    "merge": ("object",),
    "add_messages": ("messages", "list"),
    "sum": ("integer", "number"),
    "max": ("integer", "number", "string"),
    "min": ("integer", "number", "string"),
}


def check_state(ctx: LintContext) -> None:
    """Defaults match their field's type; reducers fit their field's type."""
    for name, field in ctx.body.state.items():
        where = pointer("spec", "state", name)
        if (
            field.default is not None
            and field.type in _DEFAULT_TYPES
            and not _is_type(field.default, field.type)
        ):
            hint = (
                " (YAML 1.2 reads `yes`/`no`/`on`/`off` as text: write `true`/`false`)"
                if field.type == "boolean" and isinstance(field.default, str)
                else ""
            )
            ctx.report(
                f"{where}/default",
                "state-default-type",
                f"the default {short_repr(field.default)} of `{name}` is not of its type "
                f"`{field.type}`",
                f"give a default of type `{field.type}`, or change the type{hint}",
            )
        fits = _REDUCER_TYPES.get(field.reducer)
        if fits is not None and field.type != "any" and field.type not in fits:
            ctx.report(
                f"{where}/reducer",
                "reducer-type",
                f"reducer `{field.reducer}` cannot combine values of type `{field.type}`",
                f"use it with a field of type {' or '.join(f'`{t}`' for t in fits)} "
                "(or `any`), or pick another reducer",
            )


def _is_type(value: Any, type_name: str) -> bool:
    if isinstance(value, bool) and type_name in ("integer", "number"):
        return False  # bool is an int in Python, but not in the spec
    return isinstance(value, _DEFAULT_TYPES[type_name])


def check_json_schemas(ctx: LintContext) -> None:
    """Structured output schemas must be valid JSON Schema."""
    for node_id, node in ctx.body.nodes.items():
        if isinstance(node, LlmNode) and node.schema_ is not None:
            _check_schema(ctx, node.schema_, node_pointer(node_id, "schema"))
        elif isinstance(node, MapNode) and node.do.schema_ is not None:
            _check_schema(ctx, node.do.schema_, node_pointer(node_id, "do", "schema"))


def _check_schema(ctx: LintContext, schema: dict[str, Any], where: str) -> None:
    if plainly_valid(schema):
        return
    # Imported here: only specs with a schema beyond plainly_valid's keywords pay for it (60 ms).
    import jsonschema
    from jsonschema.exceptions import SchemaError

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        inner = "".join(f"/{part}" for part in exc.path)
        ctx.report(
            f"{where}{inner}",
            "invalid-json-schema",
            f"`schema` is not a valid JSON Schema: {exc.message}",
            "fix the schema, e.g. `{type: object, properties: {answer: {type: string}}, "
            "required: [answer]}`",
        )


_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_names(value: Any) -> bool:
    return isinstance(value, list) and all(map(_is_string, value)) and len(set(value)) == len(value)


def _is_json_type(value: Any) -> bool:
    if isinstance(value, str):
        return value in _SIMPLE_TYPES
    return _is_names(value) and bool(value) and set(value) <= _SIMPLE_TYPES


def _is_schemas(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(map(plainly_valid, value))


def _is_schema_map(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(name, str) and plainly_valid(schema) for name, schema in value.items()
    )


def plainly_valid(schema: Any) -> bool:
    """Whether ``schema`` is valid JSON Schema (2020-12, what jsonschema picks without
    ``$schema``) by its keywords alone: each one of :data:`_KEYWORDS` with a value its
    meta-schema accepts. Most structured-output schemas are; for them jsonschema's check
    could only agree, and its import is skipped. False sends a schema to that check, whose
    message is the one reported (docs/decisions.md 85)."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    for keyword, value in schema.items():
        accepts = _KEYWORDS.get(keyword)
        if accepts is None or not accepts(value):
            return False
    return True


#: The common keywords of JSON Schema 2020-12 and what its meta-schema asks of their values.
_KEYWORDS: dict[str, Callable[[Any], bool]] = {
    "type": _is_json_type,
    "properties": _is_schema_map,
    "required": _is_names,
    "items": plainly_valid,
    "additionalProperties": plainly_valid,
    "anyOf": _is_schemas,
    "oneOf": _is_schemas,
    "allOf": _is_schemas,
    "enum": lambda value: isinstance(value, list),
    "const": lambda _value: True,
    "default": lambda _value: True,
    "examples": lambda value: isinstance(value, list),
    "title": _is_string,
    "description": _is_string,
    "format": _is_string,
    "minimum": _is_number,
    "maximum": _is_number,
    "exclusiveMinimum": _is_number,
    "exclusiveMaximum": _is_number,
    "minLength": _is_count,
    "maxLength": _is_count,
    "minItems": _is_count,
    "maxItems": _is_count,
    "minProperties": _is_count,
    "maxProperties": _is_count,
    "uniqueItems": lambda value: isinstance(value, bool),
}


def check_scripts(ctx: LintContext) -> None:
    """A scripted reply's ``when`` must be a valid regular expression."""
    for name, model in ctx.body.models.items():
        for index, reply in enumerate(model.script):
            if reply.when is None:
                continue
            try:
                compile_regex(reply.when)
            except ExpressionError as exc:
                ctx.report(
                    pointer("spec", "models", name, "script", index, "when"),
                    "invalid-regex",
                    f"`when` is not a valid regular expression: {exc.message}",
                    "fix the pattern (Python `re` syntax); escape literal characters such as "
                    "`(`, `[`, `?` with a backslash",
                )


def check_examples(ctx: LintContext) -> None:
    """Example names are unique and their inputs are inputs of the graph."""
    body = ctx.body
    inputs = body.input_fields
    seen: set[str] = set()
    for index, example in enumerate(body.examples):
        where = pointer("spec", "examples", index)
        if example.name in seen:
            ctx.report(
                f"{where}/name",
                "duplicate-example",
                f"two examples are named `{example.name}`",
                "give each example its own name (`plait run --example NAME` picks by it)",
            )
        seen.add(example.name)
        for name in example.models:
            if name not in body.models:
                ctx.report(
                    f"{where}/models/{name}",
                    "example-unknown-model",
                    f"example `{example.name}` gives replies for `{name}`, which is not a model "
                    "of this spec",
                    f"use a name of spec.models.{did_you_mean(name, body.models)} "
                    f"({known(body.models)})",
                )
        for key in example.input:
            if key not in inputs:
                ctx.report(
                    f"{where}/input/{key}",
                    "example-unknown-input",
                    f"example `{example.name}` gives `{key}`, which is not an input of this graph",
                    "use a field of spec.input (or of spec.state when there is no "
                    f"spec.input).{did_you_mean(key, inputs)} ({known(inputs)})",
                )
