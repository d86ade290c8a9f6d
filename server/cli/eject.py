"""``plait eject SPEC``: write the spec as a readable LangGraph module (docs/eject.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from plait.server.cli.exits import CliError, ExitCode
from plait.server.cli.specs import load_valid_spec, registry_for


def eject_command(
    spec: Annotated[
        Path, typer.Argument(help="The spec file.", show_default=False, metavar="SPEC")
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the module here (a folder: <name>.py in it); default: print it.",
            show_default=False,
            metavar="FILE",
        ),
    ] = None,
    partial: Annotated[
        bool,
        typer.Option(
            "--partial",
            help="Eject a spec with features that do not map: listed in the module's docstring, "
            "and nodes that need one raise NotImplementedError.",
        ),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite FILE if it exists.")] = False,
) -> None:
    """Write the spec as a LangGraph module that needs Plait only for its governed steps."""
    # Imported here: the spec language is not needed by `plait --help`.
    from plait.engine.eject import NotEjectable, eject

    loaded = load_valid_spec(spec)
    target = _target(output, loaded.name, force=force)
    try:
        source = eject(
            loaded,
            registry_for(loaded),
            target=target or Path.cwd() / f"{_module_name(loaded.name)}.py",
            partial=partial,
        )
    except NotEjectable as exc:
        raise CliError(str(exc), ExitCode.USAGE) from None
    if target is None:
        typer.echo(source, nl=False)
        return
    target.write_text(source, encoding="utf-8")
    typer.echo(f"wrote {target}", err=True)


def _target(output: Path | None, name: str, *, force: bool) -> Path | None:
    """Where the module goes: ``None`` for stdout; a folder gets ``<name>.py``."""
    if output is None:
        return None
    if output.is_dir():
        output = output / f"{_module_name(name)}.py"
    if output.suffix != ".py":
        raise CliError(f"{output}: the module's file name must end in .py")
    if not output.parent.is_dir():
        raise CliError(f"{output.parent}: no such folder")
    if output.exists() and not force:
        raise CliError(f"{output} exists; pass --force to overwrite it")
    return output


def _module_name(name: str) -> str:
    return name.replace("-", "_")
