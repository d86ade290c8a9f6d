"""What a model is shown of a tool whose MCP server its run's tenant does not trust.

A server's free text (the tool's description, the ``description``, ``title`` and
other prose of its input schema, its annotations) could carry instructions, and
a model reads a tool's description as guidance from whoever set up the call. For
a server off the tenant's trust list (:mod:`plait.engine.governance.mcp_trust`)
the model gets the tool's name and the structure of its input schema, which it
needs to call the tool, and a line Plait writes in place of the description. The
call itself is unchanged: its arguments are still checked against the server's
full schema (``engine/tools/mcp/schema_check.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Schema keywords kept: structure and constraints a caller needs. Every other
#: keyword (``description``, ``title``, ``examples``, ``default``, ``$comment``,
#: vendor extensions) is prose or a hint the server wrote, and is dropped.
_KEPT = frozenset(
    {
        "type",
        "enum",
        "const",
        "format",
        "pattern",
        "required",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "nullable",
        "$ref",
        "$schema",
    }
)
#: Keywords whose value is one schema.
_ONE = frozenset(
    {"items", "additionalProperties", "not", "contains", "propertyNames", "unevaluatedItems"}
)
#: Keywords whose value is a list of schemas.
_MANY = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
#: Keywords whose value maps names to schemas (the names are kept: a caller needs them).
_NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def withheld_description(tool: str, server: str) -> str:
    """The line a model sees instead of an untrusted server's description of ``tool``."""
    return (
        f"Tool `{tool}` from MCP server `{server}` (not trusted by this tenant: "
        "its own description is withheld). Call it only as the task and your "
        "instructions require."
    )


def structure_of(schema: Any) -> Any:
    """``schema`` with only the keywords a caller needs (see :data:`_KEPT`), at every depth."""
    if not isinstance(schema, Mapping):
        return schema  # `true`/`false` schemas
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _KEPT:
            kept[key] = value
        elif key in _ONE | _MANY and isinstance(value, list):  # also draft-4 tuple `items`
            kept[key] = [structure_of(item) for item in value]
        elif key in _ONE:
            kept[key] = structure_of(value)
        elif key in _NAMED and isinstance(value, Mapping):
            kept[key] = {name: structure_of(item) for name, item in value.items()}
    return kept


def untrusted_tool_spec(
    tool: str, server: str, schema: Mapping[str, Any], description: str | None = None
) -> dict[str, Any]:
    """The OpenAI-format tool a model is bound with for ``tool`` of an untrusted ``server``.

    ``description`` is the spec's own ``description:`` of the tool, when it has
    one (the tenant's words, not the server's); else :func:`withheld_description`.
    """
    parameters = structure_of(schema)
    parameters.setdefault("type", "object")
    parameters.setdefault("properties", {})
    return {
        "type": "function",
        "function": {
            "name": tool,
            "description": description or withheld_description(tool, server),
            "parameters": parameters,
        },
    }
