"""``plait agentspec export|import``: specs to Open Agent Spec and back (docs/agentspec.md).

Each command prints what the other format cannot carry on stderr; ``--strict``
makes that an error (exit 7) instead of a report.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.server.cli.exits import EXIT_CODES_HELP, CliError, ExitCode

if TYPE_CHECKING:
    from plait.engine.interop import Unmapped
    from plait.engine.spec import GraphSpec

agentspec_app = typer.Typer(
    help="Export specs as Open Agent Spec documents (pyagentspec) and import them back.",
    no_args_is_help=True,
)


class Format(StrEnum):
    """Agent Spec serialisations."""

    json = "json"
    yaml = "yaml"


_Strict = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Exit 7 when anything has no equivalent in the other format, or needs a person "
        "(it is still written).",
    ),
]


def _write(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {output}: {exc.strerror}", ExitCode.USAGE) from None
    typer.echo(f"wrote {output}", err=True)


def _report(unmapped: list[Unmapped]) -> None:
    if not unmapped:
        typer.echo("Everything in the spec has an Agent Spec equivalent.", err=True)
        return
    typer.echo(
        f"{len(unmapped)} part(s) have no Agent Spec equivalent; they are kept in "
        "metadata.plait.restore, so `plait agentspec import` restores them:",
        err=True,
    )
    for item in unmapped:
        typer.echo(f"  {item.spec}#{item.pointer}: {item.reason}", err=True)


@agentspec_app.command("export", epilog=EXIT_CODES_HELP)
def export_command(
    spec: Annotated[
        Path, typer.Argument(help="The spec file.", show_default=False, metavar="SPEC")
    ],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the document here (default: stdout)."),
    ] = None,
    format: Annotated[
        Format | None,
        typer.Option("--format", "-f", help="json or yaml (default: from -o's suffix, else json)."),
    ] = None,
    report_json: Annotated[
        bool, typer.Option("--report-json", help="Print the report as JSON on stderr.")
    ] = False,
    strict: _Strict = False,
) -> None:
    """Write SPEC as an Agent Spec Flow (an Agent for a single-agent spec) and list what
    Agent Spec cannot express. Subgraphs in SPEC's folder become the subflows of FlowNodes."""
    # Imported here: `plait --help` imports this module.
    from plait.engine.interop import export_agentspec
    from plait.server.cli.specs import load_valid_spec, registry_for

    loaded = load_valid_spec(spec)
    registry = registry_for(loaded)

    def resolve(ref: str) -> GraphSpec | None:
        return registry.resolve(ref).spec if ref in registry else None

    exported = export_agentspec(loaded.spec, resolve)
    chosen = format or (
        Format.yaml if output is not None and output.suffix in (".yaml", ".yml") else Format.json
    )
    _write(exported.text(chosen.value), output)
    if report_json:
        typer.echo(json.dumps([item.to_dict() for item in exported.unmapped], indent=2), err=True)
    else:
        _report(exported.unmapped)
    if strict and exported.unmapped:
        raise CliError(
            f"{len(exported.unmapped)} part(s) of {spec} have no Agent Spec equivalent",
            ExitCode.NOT_PORTABLE,
        )


@agentspec_app.command("import", epilog=EXIT_CODES_HELP)
def import_command(
    document: Annotated[
        Path,
        typer.Argument(
            help="An Agent Spec JSON or YAML file; - for stdin.",
            show_default=False,
            metavar="DOCUMENT",
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the spec here (default: stdout); subflows go beside it as NAME.yaml.",
        ),
    ] = None,
    native: Annotated[
        bool,
        typer.Option(
            "--native",
            help="Read only what Agent Spec says: ignore what a Plait export kept in "
            "metadata.plait.",
        ),
    ] = False,
    strict: _Strict = False,
) -> None:
    """Write an Agent Spec Flow or Agent as a Plait spec, checked like `plait validate`.

    Notes on stderr say what needs a person (a server tool's function, an agent's prompt).
    """
    from plait.engine.interop import (
        AgentSpecImportError,
        import_agentspec,
        read_agentspec,
        spec_yaml,
    )
    from plait.engine.spec import SpecRegistry, check_text, has_errors
    from plait.server.cli.output import print_issues, styled_output

    try:
        text = sys.stdin.read() if str(document) == "-" else document.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {document}: {exc}", ExitCode.USAGE) from None
    try:
        imported = import_agentspec(read_agentspec(text), use_metadata=not native)
    except AgentSpecImportError as exc:
        raise CliError(f"{document}: {exc}", ExitCode.INVALID_SPEC) from None
    registry = SpecRegistry()
    folder = output.parent if output is not None else None
    issues = []
    for ref, child in imported.children.items():
        child_path = (folder / f"{child['metadata']['name']}.yaml") if folder else None
        child_text = spec_yaml(child, child_path, document.name)
        loaded, child_issues = check_text(child_text, str(child_path or ref))
        issues += child_issues
        if loaded is not None:
            registry.add(loaded)
        if child_path is not None:
            _write(child_text, child_path)
        else:
            typer.echo(f"note: subflow {ref} is not written: give -o to write it beside", err=True)
    spec_text = spec_yaml(imported.data, output, document.name)
    issues += check_text(spec_text, str(output or "<stdout>"), registry)[1]
    _write(spec_text, output)
    for note in imported.notes:
        typer.echo(f"note: {note}", err=True)
    if issues:
        print_issues(styled_output(stderr=True), issues)
    if has_errors(issues):
        raise CliError("the imported spec has errors (listed above)", ExitCode.INVALID_SPEC)
    if strict and imported.notes:
        raise CliError(f"{len(imported.notes)} note(s) on {document}", ExitCode.NOT_PORTABLE)
