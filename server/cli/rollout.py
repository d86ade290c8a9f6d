"""``plait rollout``: a graph's canary, its share of new threads, promote and roll back.

On the database directly, like ``plait queue``, for operators who have the
database URL; a tenant uses the API (``/graphs/{name}/rollout``). Each command
prints the rollout as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from plait.server.cli.database import connected_pool
from plait.server.cli.exits import CliError, ExitCode

if TYPE_CHECKING:
    from plait.engine.store import Pool

rollout_app = typer.Typer(
    help="Serve a graph's new version to a share of new threads (canary), promote or roll back.",
    no_args_is_help=True,
)

_Graph = Annotated[str, typer.Argument(help="The graph's name.", metavar="GRAPH")]
_Tenant = Annotated[str, typer.Option("--tenant", help="The tenant whose rollout it is.")]
DEFAULT_TENANT = "default"  # plait.server.auth.store's, not imported: `plait --help` loads this


def _run(work: Callable[[Pool], Awaitable[dict[str, Any]]]) -> None:
    """Run ``work`` on a connected pool; the registry's refusals are usage errors."""
    # Imported here: `plait --help` imports this module.
    import asyncio

    from plait.server.graphs.rollouts import RolloutInvalid, RolloutNoCanary, RolloutNotFound

    async def connected() -> dict[str, Any]:
        async with connected_pool() as pool:
            try:
                return await work(pool)
            except (RolloutInvalid, RolloutNoCanary, RolloutNotFound) as exc:
                raise CliError(str(exc), ExitCode.USAGE) from None

    typer.echo(json.dumps(asyncio.run(connected()), indent=2))


@rollout_app.command("show")
def show(
    graph: _Graph,
    tenant: _Tenant = DEFAULT_TENANT,
    hours: Annotated[int, typer.Option("--hours", min=1, help="Count runs of this window.")] = 24,
) -> None:
    """The rollout and, per version, the runs created on it in the last HOURS."""
    from datetime import timedelta

    from plait.server.queue.version_counts import rollout_report

    async def work(pool: Pool) -> dict[str, Any]:
        return await rollout_report(pool, graph, tenant, timedelta(hours=hours))

    _run(work)


@rollout_app.command("set")
def set_(
    graph: _Graph,
    canary: Annotated[
        str | None, typer.Option("--canary", help="The version a share of new threads gets.")
    ] = None,
    share: Annotated[
        int | None,
        typer.Option("--share", help="Percent (0-100) of new threads that start on the canary."),
    ] = None,
    stable: Annotated[
        str | None,
        typer.Option(
            "--stable",
            help="The version the other new threads get (default: the current stable, "
            "else the newest other than the canary).",
        ),
    ] = None,
    tenant: _Tenant = DEFAULT_TENANT,
) -> None:
    """Start or change a rollout; threads already started stay on their version."""
    from plait.server.graphs.rollouts import rollout_to_api, set_rollout

    async def work(pool: Pool) -> dict[str, Any]:
        rollout = await set_rollout(
            pool, graph, tenant=tenant, stable=stable, canary=canary, share=share
        )
        return rollout_to_api(graph, rollout)

    _run(work)


@rollout_app.command("promote")
def promote(graph: _Graph, tenant: _Tenant = DEFAULT_TENANT) -> None:
    """Make the canary the stable version: every new thread starts on it."""
    from plait.server.graphs import rollouts
    from plait.server.graphs.rollouts import rollout_to_api

    async def work(pool: Pool) -> dict[str, Any]:
        return rollout_to_api(graph, await rollouts.promote(pool, graph, tenant))

    _run(work)


@rollout_app.command("rollback")
def rollback(graph: _Graph, tenant: _Tenant = DEFAULT_TENANT) -> None:
    """Drop the canary: new threads start on the stable version; threads on the canary stay."""
    from plait.server.graphs import rollouts
    from plait.server.graphs.rollouts import rollout_to_api

    async def work(pool: Pool) -> dict[str, Any]:
        return rollout_to_api(graph, await rollouts.rollback(pool, graph, tenant))

    _run(work)


@rollout_app.command("clear")
def clear(graph: _Graph, tenant: _Tenant = DEFAULT_TENANT) -> None:
    """End the rollout: the graph's name means its newest version again for new threads."""
    from plait.server.graphs.rollouts import RolloutNotFound, delete_rollout, rollout_to_api

    async def work(pool: Pool) -> dict[str, Any]:
        if not await delete_rollout(pool, graph, tenant):
            raise RolloutNotFound(f"{graph} has no rollout for tenant {tenant}")
        return rollout_to_api(graph, None)

    _run(work)
