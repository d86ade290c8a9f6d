"""Parsing ``plait run``'s inputs: ``--input``, ``--example``, ``--decision``, ``--arguments``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plait.server.cli.exits import CliError

if TYPE_CHECKING:
    from plait.engine.spec import Example, GraphSpec

DECISIONS = ("approve", "reject", "edit")


def parse_json_object(text: str, option: str) -> dict[str, Any]:
    """``text`` as a JSON object, or ``@path`` to read one from a file; else :class:`CliError`."""
    source = option
    if text.startswith("@"):
        path = Path(text[1:])
        source = f"{option} file {path}"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CliError(f"cannot read {source}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise CliError(f"{source} is not UTF-8 text") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{source} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}; "
            """write an object such as '{"goal": "..."}' or @file.json"""
        ) from None
    if not isinstance(value, dict):
        raise CliError(f"{source} must be a JSON object, not {type(value).__name__}")
    return value


def pick_example(spec: GraphSpec, name: str | None) -> Example:
    """The example called ``name``, or the spec's first one when ``name`` is None."""
    examples = spec.spec.examples
    if name is None:
        if not examples:
            raise CliError(
                f"{spec.metadata.name} has no examples; give the input with --input JSON"
            )
        return examples[0]
    for example in examples:
        if example.name == name:
            return example
    known = ", ".join(example.name for example in examples) or "none"
    raise CliError(f"no example {name!r} in {spec.metadata.name}; examples: {known}")


def make_decision(decision: str, arguments: str | None, comment: str | None) -> dict[str, Any]:
    """The resume value of an approval: ``{decision, arguments, comment}``."""
    if decision not in DECISIONS:
        raise CliError(f"--decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    parsed = parse_json_object(arguments, "--arguments") if arguments is not None else None
    if decision == "edit" and parsed is None:
        raise CliError("--decision edit needs the new arguments: --arguments JSON")
    if decision != "edit" and parsed is not None:
        raise CliError("--arguments goes with --decision edit only")
    return {"decision": decision, "arguments": parsed, "comment": comment}
