"""``plait export trajectories``: a graph's ended runs as JSON Lines, for offline evaluation.

On the database directly, like ``plait queue``, for operators who have the
database URL; a tenant uses the API (``GET /graphs/{name}/trajectories``). One
JSON object per run and line, oldest run first, the same object as ``GET
/threads/{tid}/runs/{rid}/trajectory`` (docs/evaluation.md); runs are read a page
at a time, so a large export never sits in memory.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from plait.server.cli.database import connected_pool
from plait.server.cli.exits import CliError, ExitCode

export_app = typer.Typer(help="Export runs for offline evaluation.", no_args_is_help=True)

DEFAULT_TENANT = "default"  # plait.server.auth.store's, not imported: `plait --help` loads this


@export_app.command("trajectories")
def trajectories(
    graph: Annotated[str, typer.Argument(help="The graph's name.", metavar="GRAPH")],
    version: Annotated[
        str | None, typer.Option("--version", help="Only runs of this version.")
    ] = None,
    since: Annotated[
        datetime | None,
        typer.Option("--since", help="Only runs created at or after this time (ISO 8601)."),
    ] = None,
    tenant: Annotated[str, typer.Option("--tenant", help="The tenant whose runs.")] = (
        DEFAULT_TENANT
    ),
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file (default: standard output)."),
    ] = None,
    specs: Annotated[
        Path,
        typer.Option(
            "--specs",
            help="Folder of the specs' python code (module:function refs import from it).",
            metavar="DIR",
        ),
    ] = Path("specs"),
) -> None:
    """Write every ended run of GRAPH as one JSON line: its steps in order (node, input,
    output, tool calls, approvals), input, output, outcome and usage, secrets masked."""
    # Imported here: `plait --help` imports this module.
    import asyncio
    import sys

    import orjson

    from plait.engine.compiler import CompiledSpec
    from plait.server.queue.runs import Run, ended_runs_of_graph
    from plait.server.queue.trajectories import export_lines
    from plait.server.workers.execution import GraphCache

    async def work() -> int:
        count = 0
        async with connected_pool() as pool:
            graphs = GraphCache(pool, specs if specs.is_dir() else None)

            async def compiled_of(run: Run) -> CompiledSpec:
                return await graphs.get(run.graph, run.version, run.tenant)

            pages = ended_runs_of_graph(pool, graph, tenant=tenant, version=version, since=since)
            target = output.open("wb") if output is not None else sys.stdout.buffer
            try:
                async for line in export_lines(pool, pages, compiled_of):
                    target.write(orjson.dumps(line) + b"\n")
                    count += 1
            finally:
                if output is not None:
                    target.close()
                else:
                    target.flush()
        return count

    try:
        written = asyncio.run(work())
    except OSError as exc:
        raise CliError(f"cannot write the export: {exc}", ExitCode.ENVIRONMENT) from None
    typer.echo(f"{written} run(s) of {graph} exported", err=True)
