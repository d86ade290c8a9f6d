"""``plait worker``: a process that only executes queued runs (no HTTP).

Start as many as needed beside ``plait serve`` (or ``plait serve --no-workers``);
they share the run queue in Postgres. SIGTERM or Ctrl-C hands the running runs
back to the queue, where another worker continues them from their last
checkpoint, and then exits.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from plait.server.cli.database import connected_pool
from plait.server.cli.exits import CliError
from plait.server.queue.defaults import DEFAULT_LEASE_SECONDS, DEFAULT_MAX_ATTEMPTS
from plait.server.settings import LEASE_SECONDS_ENV, MAX_ATTEMPTS_ENV

if TYPE_CHECKING:
    from plait.server.cli.worker_health import WorkerHealth


def worker_command(
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency",
            "-c",
            min=1,
            help="Most runs executed at once; above 10 only while the worker's core has room.",
        ),
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
            envvar=LEASE_SECONDS_ENV,
            min=0.3,
            help="Lease on a claimed run; a dead worker's runs are taken over after it.",
        ),
    ] = DEFAULT_LEASE_SECONDS,
    max_attempts: Annotated[
        int,
        typer.Option(
            "--max-attempts",
            envvar=MAX_ATTEMPTS_ENV,
            min=1,
            help="Attempts of a run that may lose their worker in a row (crash, kill, cut-off, "
            "no step finished between) before the run is dead-lettered; a spec's "
            "max_attempts wins.",
        ),
    ] = DEFAULT_MAX_ATTEMPTS,
    worker_id: Annotated[
        str | None,
        typer.Option("--id", help="Worker id (default: host:pid:random).", metavar="ID"),
    ] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            "--metrics-port",
            min=0,
            max=65535,
            help="Serve this process's Prometheus metrics at http://HOST:PORT/metrics.",
            metavar="PORT",
        ),
    ] = None,
    metrics_host: Annotated[
        str, typer.Option("--metrics-host", help="Address for --metrics-port.")
    ] = "127.0.0.1",
    health_port: Annotated[
        int | None,
        typer.Option(
            "--health-port",
            min=0,
            max=65535,
            help="Serve a liveness probe at http://HOST:PORT/healthz (200 while the worker's "
            "event loop turns).",
            metavar="PORT",
        ),
    ] = None,
    health_host: Annotated[
        str, typer.Option("--health-host", help="Address for --health-port.")
    ] = "127.0.0.1",
) -> None:
    """Execute queued runs until SIGTERM or Ctrl-C, then hand unfinished runs back."""
    from plait.engine.observability import configure_tracing
    from plait.server.operations import metrics
    from plait.server.operations.logs import configure_logging
    from plait.server.workers.processes import die_with_supervisor
    from plait.server.workers.worker import default_worker_id

    die_with_supervisor()  # a child of `plait serve --worker-processes` stops with it
    try:
        configure_logging()
    except ValueError as exc:
        raise CliError(str(exc)) from None
    configure_tracing()
    metrics.install()  # also without --metrics-port: step and tool failures are logged through it
    if metrics_port is not None:
        with _listening("--metrics-port", metrics_host, metrics_port):
            _serve_metrics(metrics_host, metrics_port)
    health = None
    if health_port is not None:
        from plait.server.cli.worker_health import WorkerHealth

        health = WorkerHealth()
        with _listening("--health-port", health_host, health_port):
            health.serve(health_host, health_port)
    options = _Options(concurrency, specs, lease_seconds, max_attempts)
    _run_loop(_serve(options, worker_id or default_worker_id(), health))


@contextlib.contextmanager
def _listening(option: str, host: str, port: int) -> Iterator[None]:
    """Turn a port that cannot be bound (in use, bad address) into a clear CLI error."""
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise CliError(f"cannot listen on {host}:{port} ({option}): {reason}") from None


def _run_loop(main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` on uvloop where it is installed (as uvicorn runs ``plait serve``'s
    workers): its loop costs less CPU per callback than asyncio's."""
    # asyncio is imported in the functions that run the loop: `plait --help` imports this module.
    try:
        import uvloop
    except ImportError:  # e.g. Windows: the standard loop
        import asyncio

        asyncio.run(main)
        return
    uvloop.run(main)


def _serve_metrics(host: str, port: int) -> None:
    """Serve the process's metrics (steps, calls, breakers) from a thread of prometheus-client."""
    from prometheus_client import start_http_server

    start_http_server(port, addr=host)


@dataclass(frozen=True)
class _Options:
    """How the worker works (from the command line)."""

    concurrency: int
    specs: Path
    lease_seconds: float
    max_attempts: int


async def _serve(options: _Options, worker_id: str, health: WorkerHealth | None = None) -> None:
    """Work until stopped, with the liveness ticks of ``health`` (if any) running throughout."""
    import asyncio

    # From the start: connecting and migrating count as turning, not as stuck.
    ticking = asyncio.create_task(health.tick_forever()) if health is not None else None
    try:
        await _work(options, worker_id)
    finally:
        if ticking is not None:
            ticking.cancel()


async def _work(options: _Options, worker_id: str) -> None:
    """Connect, run a :class:`plait.server.workers.worker.Worker` until it stops, and say so."""
    # Imported here: the other commands need not load the server and LangGraph.
    import asyncio

    from plait.server.cli.collector import tune_for_serving
    from plait.server.queue.defaults import run_connections
    from plait.server.workers.worker import Worker

    tune_for_serving()  # everything is imported by now
    concurrency, lease_seconds = options.concurrency, options.lease_seconds
    async with connected_pool() as pool:
        # Each run needs a connection now and then (checkpoints, tool results), the
        # journal writer holds one and the worker's own jobs take one at times.
        await pool.resize(min_size=1, max_size=run_connections(concurrency) + 2)
        worker = Worker(
            pool,
            worker_id=worker_id,
            concurrency=concurrency,
            lease_seconds=lease_seconds,
            specs_dir=options.specs,
            max_attempts=options.max_attempts,
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
            f"lease {lease_seconds:g}s, max attempts {options.max_attempts}); "
            "SIGTERM or Ctrl-C hands its runs back",
            flush=True,
        )
        await running
        print(f"plait worker {worker_id} stopped", flush=True)
