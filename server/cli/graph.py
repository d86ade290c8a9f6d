"""``plait graph SPEC``: print the spec's graph as a Mermaid flowchart."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from plait.server.cli.specs import load_valid_spec


def graph_command(
    spec: Annotated[
        Path, typer.Argument(help="The spec file.", show_default=False, metavar="SPEC")
    ],
) -> None:
    """Print the graph as Mermaid (paste it into a Markdown file or mermaid.live)."""
    # Imported here: the compiler package pulls in LangGraph, which `plait --help` need not load.
    from plait.engine.compiler import to_mermaid

    loaded = load_valid_spec(spec)
    typer.echo(to_mermaid(loaded.spec))
