"""``plait validate PATH... [--format text|json]``: check specs, exit 1 on any error."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated

import typer

from plait.server.cli.exits import ExitCode
from plait.server.cli.specs import SpecPaths


class Format(StrEnum):
    """Output formats of ``plait validate``."""

    text = "text"
    json = "json"


def validate_command(
    paths: SpecPaths,
    format: Annotated[
        Format, typer.Option("--format", "-f", help="text for people, json for tools.")
    ] = Format.text,
) -> None:
    """Check YAML syntax, the schema and the semantics of specs.

    Every problem names file, line, column and JSON pointer, and says how to fix
    it. Exits 1 when any error is found (warnings alone exit 0).
    """
    # Imported here: `plait --help` imports this module.
    from plait.engine.spec import check_paths, has_errors
    from plait.server.cli.output import print_issues, styled_output

    files, issues = check_paths(paths)
    failed = has_errors(issues)
    if format is Format.json:
        typer.echo(json.dumps([issue.to_dict() for issue in issues], indent=2))
    else:
        output = styled_output()
        print_issues(output, issues)
        errors = sum(issue.severity == "error" for issue in issues)
        warnings = len(issues) - errors
        checked = f"{len(files)} spec file{'' if len(files) == 1 else 's'}"
        if failed:
            output.line((f"{errors} error(s)", "bold red"), f", {warnings} warning(s) in {checked}")
        else:
            note = f" ({warnings} warning(s))" if warnings else ""
            output.line((f"✓ {checked} valid", "green"), note)
    raise typer.Exit(ExitCode.INVALID_SPEC if failed else ExitCode.OK)
