"""``plait schema [--write]``: the JSON Schema of ``plait/v1`` specs."""

from __future__ import annotations

from typing import Annotated

import typer

from plait.engine.spec import SCHEMA_PATH, schema_text, write_schema


def schema_command(
    write: Annotated[
        bool, typer.Option("--write", help=f"Write it to {SCHEMA_PATH} instead of printing it.")
    ] = False,
) -> None:
    """Print the JSON Schema that editors use to check and complete specs."""
    if write:
        typer.echo(f"wrote {write_schema()}")
    else:
        typer.echo(schema_text(), nl=False)
