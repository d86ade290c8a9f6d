"""``plait upgrade THREAD --to VERSION``: move a parked or idle thread to another version of
its graph through the migration that version declares (docs/decisions.md 95).

On the database directly, like ``plait queue`` and ``plait rollout``, for operators who
have the database URL; a tenant uses the API (``POST /threads/{id}/upgrade``). Prints
what changed as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from plait.server.cli.database import connected_pool
from plait.server.cli.exits import CliError, ExitCode
from plait.server.settings import SPECS_ENV

DEFAULT_TENANT = "default"  # plait.server.auth.store's, not imported: `plait --help` loads this


def upgrade_command(
    thread: Annotated[str, typer.Argument(help="The thread's id (as its tenant knows it).")],
    to: Annotated[str, typer.Option("--to", help="The version to move the thread to.")],
    tenant: Annotated[str, typer.Option("--tenant", help="The thread's tenant.")] = DEFAULT_TENANT,
    actor: Annotated[
        str, typer.Option("--actor", help="Who upgrades it (recorded in the audit trail).")
    ] = "cli",
    specs: Annotated[
        Path,
        typer.Option(
            "--specs",
            envvar=SPECS_ENV,
            help="The specs folder `plait serve` uses (python code of the graph imports from it).",
            metavar="DIR",
        ),
    ] = Path("specs"),
) -> None:
    """Move THREAD to version TO of its graph: its state is mapped as TO's `migrations`
    say, a pending approval stays pending on the renamed node, and the thread runs TO from
    then on. Refused (exit 2) while a run is active, or when TO declares no migration from
    the thread's version (the message says what to declare)."""
    import asyncio

    from plait.engine.run import UpgradeRefused
    from plait.server.queue.threads import ThreadNotFound, stored_thread_id
    from plait.server.queue.upgrades import GraphVersionMissing, upgrade_thread
    from plait.server.workers.execution import GraphCache

    async def work() -> dict[str, Any]:
        async with connected_pool() as pool:
            specs_dir = specs if specs.is_dir() else None
            try:
                return await upgrade_thread(
                    pool,
                    GraphCache(pool, specs_dir),
                    stored_thread_id(tenant, thread),
                    to,
                    tenant=tenant,
                    actor=actor,
                    specs_dir=specs_dir,
                )
            except (UpgradeRefused, GraphVersionMissing, ThreadNotFound) as exc:
                raise CliError(str(exc), ExitCode.USAGE) from None

    typer.echo(json.dumps(asyncio.run(work()), indent=2))
