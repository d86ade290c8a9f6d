"""``plait queue``: dead-lettered runs and their requeue, on the database directly.

For operators on a machine that has the database URL, across every tenant;
a tenant requeues its own runs over HTTP (``POST
/threads/{tid}/runs/{rid}/requeue``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from plait.server.cli.database import connected_pool
from plait.server.cli.exits import CliError, ExitCode

if TYPE_CHECKING:
    from plait.server.queue.runs import Run

queue_app = typer.Typer(
    help="Runs the queue gave up on (dead-lettered) and their requeue.", no_args_is_help=True
)


def _shown(run: Run) -> dict[str, Any]:
    """What an operator sees of a run (JSON-ready)."""
    return {
        "run_id": run.run_id,
        "thread_id": run.thread_id,
        "tenant": run.tenant,
        "graph": f"{run.graph}@{run.version}",
        "status": run.status,
        "plait_status": run.plait_status,
        "plait_state": run.state,
        "attempt": run.attempt,
        "dead_letter": run.dead_letter,
        "updated_at": run.updated_at.isoformat(),
    }


@queue_app.command("dead-letters")
def dead_letters(
    tenant: Annotated[
        str | None, typer.Option("--tenant", help="Only this tenant's runs (default: all).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many.")] = 100,
) -> None:
    """List dead-lettered runs, newest first, as JSON."""
    # Imported here: `plait --help` imports this module.
    import asyncio

    from plait.server.queue.runs import list_dead_letters

    async def work() -> list[dict[str, Any]]:
        async with connected_pool() as pool:
            return [
                _shown(run) for run in await list_dead_letters(pool, tenant=tenant, limit=limit)
            ]

    typer.echo(json.dumps(asyncio.run(work()), indent=2))


@queue_app.command("requeue")
def requeue(
    run_id: Annotated[str, typer.Argument(help="The dead-lettered run.")],
) -> None:
    """Queue a dead-lettered run again: its lost attempts reset, it continues from its
    last checkpoint, its stream goes on with the same seqs."""
    import asyncio

    from plait.server.queue.runs import RunNotDeadLettered, RunNotFound, requeue_run

    async def work() -> dict[str, Any]:
        async with connected_pool() as pool:
            try:
                return _shown(await requeue_run(pool, run_id))
            except (RunNotFound, RunNotDeadLettered) as exc:
                raise CliError(str(exc), ExitCode.USAGE) from None

    typer.echo(json.dumps(asyncio.run(work()), indent=2))
