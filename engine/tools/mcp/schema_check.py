"""Arguments checked against an MCP tool's input schema before the call goes out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema
from jsonschema.validators import validator_for


class ToolArgumentsInvalid(ValueError):
    """Arguments that do not match the tool's input schema (never sent; not retried)."""


def check_arguments(tool: str, schema: Mapping[str, Any], args: Mapping[str, Any]) -> None:
    """Raise :class:`ToolArgumentsInvalid` naming every problem when ``args`` break ``schema``."""
    validator_class = validator_for(schema, default=jsonschema.Draft202012Validator)
    validator = validator_class(dict(schema))
    problems = sorted(validator.iter_errors(dict(args)), key=lambda e: list(e.absolute_path))
    if not problems:
        return
    details = "; ".join(
        f"{'/'.join(str(p) for p in error.absolute_path) or '(arguments)'}: {error.message}"
        for error in problems[:5]
    )
    raise ToolArgumentsInvalid(f"arguments of MCP tool {tool!r} do not match its schema: {details}")
