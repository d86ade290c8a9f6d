"""Plait spec data as readable YAML text, the way the examples in specs/ are written."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

from plait.engine.spec import SCHEMA_PATH

_LAST = ("output", "writes")
#: The header of the examples, for a spec written where no folder is known.
_DEFAULT_SCHEMA_REF = "../schemas/plait-v1.schema.json"


def _styled(value: Any, depth: int = 0) -> Any:
    """Small mappings and lists of scalars inline (``{type: string}``); text with newlines as a
    literal block; everything else in block style."""
    if isinstance(value, dict):
        # Nodes and tools as the examples write them: `kind` first, what they write last.
        ordered = (
            sorted(value.items(), key=lambda pair: (pair[0] != "kind") + 2 * (pair[0] in _LAST))
            if depth > 0 and "kind" in value
            else list(value.items())
        )
        mapping = CommentedMap((key, _styled(item, depth + 1)) for key, item in ordered)
        scalars = all(not isinstance(item, dict | list) for item in value.values())
        if (
            scalars
            and len(value) <= 3
            and depth >= 3
            and sum(len(str(v)) for v in value.values()) < 60
        ):
            mapping.fa.set_flow_style()
        return mapping
    if isinstance(value, list):
        items = CommentedSeq(_styled(item, depth + 1) for item in value)
        scalars = all(
            isinstance(item, str | int | float | bool) and "\n" not in str(item) for item in value
        )
        if scalars and sum(len(str(item)) for item in value) < 60:
            items.fa.set_flow_style()
        return items
    if isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value)
    return value


def spec_yaml(data: dict[str, Any], path: Path | None = None, source: str | None = None) -> str:
    """``data`` as spec YAML with the ``$schema`` header (relative to ``path``'s folder).

    ``source`` is named in the comment under the header, e.g. the imported document.
    """
    schema = (
        Path(os.path.relpath(SCHEMA_PATH, path.resolve().parent)).as_posix()
        if path is not None
        else _DEFAULT_SCHEMA_REF
    )
    yaml = YAML(typ="rt")
    yaml.width = 100
    yaml.indent(mapping=2, sequence=4, offset=2)
    out = io.StringIO()
    out.write(f"# yaml-language-server: $schema={schema}\n")
    if source:
        out.write(
            f"#\n# Imported from the Open Agent Spec document {source} (plait agentspec import).\n"
        )
    styled = _styled(data)
    # Quoted like the examples: a version is text, never a number.
    styled["metadata"]["version"] = DoubleQuotedScalarString(data["metadata"]["version"])
    yaml.dump(styled, out)
    return out.getvalue()
