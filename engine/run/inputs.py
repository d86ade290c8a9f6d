"""What is wrong with a run's input, said against its spec: fields it does not accept,
values of another type than its state declares."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator

from plait.engine.spec.models import GraphSpec

#: Each state field type's JSON Schema type and name; `messages` and `any` take any value.
_TYPES = {
    "string": ("string", "a string"),
    "integer": ("integer", "an integer"),
    "number": ("number", "a number"),
    "boolean": ("boolean", "a boolean"),
    "object": ("object", "an object"),
    "list": ("array", "a list"),
}
#: What a value given is, in the same words.
_GIVEN = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    dict: "an object",
    list: "a list",
}


def input_problems(spec: GraphSpec, data: Mapping[str, Any]) -> list[str]:
    """Each thing wrong with ``data`` as the input of ``spec``, in words for its author.

    Declared inputs are ``spec.input``, or every state field when it is absent. A
    typed field takes no null either (the input schema clients read says so): a field
    left out keeps its default, a null would replace it.
    """
    allowed = spec.spec.input_fields
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        accepted = ", ".join(allowed) if allowed else "none"
        return [
            f"unknown input field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            f"{spec.metadata.name} accepts: {accepted}"
        ]
    state = spec.spec.state
    properties = {
        name: {"type": _TYPES[state[name].type][0]}
        for name in data
        if name in state and state[name].type in _TYPES
    }
    validator = Draft202012Validator({"type": "object", "properties": properties})
    problems = []
    for error in sorted(validator.iter_errors(dict(data)), key=lambda e: str(e.path)):
        name = str(error.path[0])
        value = data[name]
        expected = f"{spec.metadata.name}'s state declares it {_TYPES[state[name].type][1]}"
        if value is None:
            problems.append(f"input field {name} is null; {expected} (leave it out: its default)")
            continue
        given = _GIVEN.get(type(value), type(value).__name__)
        problems.append(f"input field {name} is {given} ({_shown(value)}); {expected}")
    return problems


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
