"""``plait schema [--write]``: the JSON Schema of ``plait/v1`` specs."""

from __future__ import annotations

from typing import Annotated

import typer


def schema_command(
    write: Annotated[
        bool,
        typer.Option(
            "--write",
            help="Write it to the repository's schemas/plait-v1.schema.json, not stdout.",
        ),
    ] = False,
) -> None:
    """Print the JSON Schema that editors use to check and complete specs."""
    # Imported here: `plait --help` imports this module.
    from plait.engine.spec import schema_text, write_schema

    if write:
        typer.echo(f"wrote {write_schema()}")
    else:
        typer.echo(schema_text(), nl=False)
