"""``plait worker``: a process that only executes queued runs (no HTTP).

Start as many as needed beside ``plait serve`` (or ``plait serve --no-workers``);
they share the run queue in Postgres. SIGTERM or Ctrl-C hands the running runs
back to the queue, where another worker continues them from their last
checkpoint, and then exits.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Annotated

import typer

from server.cli.database import connected_pool


def worker_command(
    concurrency: Annotated[
        int,
        typer.Option("--concurrency", "-c", min=1, help="Runs executed at once."),
    ] = 10,
    specs: Annotated[
        Path,
        typer.Option(
            "--specs",
            help="Folder of the specs' python code (module:function refs import from it).",
            metavar="DIR",
        ),
    ] = Path("specs"),
    lease_seconds: Annotated[
        float,
        typer.Option(
            "--lease-seconds",
            min=0.3,
            help="Lease on a claimed run; a dead worker's runs are taken over after it.",
        ),
    ] = 10.0,
    worker_id: Annotated[
        str | None,
        typer.Option("--id", help="Worker id (default: host:pid:random).", metavar="ID"),
    ] = None,
) -> None:
    """Execute queued runs until SIGTERM or Ctrl-C, then hand unfinished runs back."""
    from server.worker import default_worker_id

    asyncio.run(_serve(concurrency, specs, lease_seconds, worker_id or default_worker_id()))


async def _serve(concurrency: int, specs: Path, lease_seconds: float, worker_id: str) -> None:
    # Imported here: the other commands need not load the server and LangGraph.
    from server.worker import Worker

    async with connected_pool() as pool:
        # Each run needs a connection now and then (checkpoints, journal, tool results).
        await pool.resize(min_size=1, max_size=2 * concurrency + 2)
        worker = Worker(
            pool,
            worker_id=worker_id,
            concurrency=concurrency,
            lease_seconds=lease_seconds,
            specs_dir=specs,
        )
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, worker.stop)
        running = asyncio.create_task(worker.run())
        started = asyncio.create_task(worker.started.wait())
        await asyncio.wait({running, started}, return_when=asyncio.FIRST_COMPLETED)
        if not started.done():  # the worker failed before it could listen
            started.cancel()
            await running
            return
        print(
            f"plait worker {worker_id} started (concurrency {concurrency}, "
            f"lease {lease_seconds:g}s); SIGTERM or Ctrl-C hands its runs back",
            flush=True,
        )
        await running
        print(f"plait worker {worker_id} stopped", flush=True)
