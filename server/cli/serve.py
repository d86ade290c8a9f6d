"""``plait serve``: the HTTP API (LangGraph Agent Server protocol + Plait's additions)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from plait.server.cli.exits import CliError
from plait.server.http.cors import CorsPolicy, parse_origins
from plait.server.queue.defaults import DEFAULT_MAX_ATTEMPTS
from plait.server.settings import (
    CORS_CREDENTIALS_ENV,
    CORS_ORIGIN_REGEX_ENV,
    CORS_ORIGINS_ENV,
    DEFAULT_KEEP_ALIVE_SECONDS,
    HOST_ENV,
    KEEP_ALIVE_ENV,
    MAX_ATTEMPTS_ENV,
    MAX_BODY_ENV,
    PORT_ENV,
    SPECS_ENV,
    WORKER_PROCESSES_ENV,
    WORKERS_ENV,
    Settings,
)


def serve_command(
    host: Annotated[
        str, typer.Option("--host", envvar=HOST_ENV, help="Address to listen on.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", "-p", envvar=PORT_ENV, min=0, max=65535, help="Port.")
    ] = 8000,
    specs: Annotated[
        Path,
        typer.Option(
            "--specs",
            envvar=SPECS_ENV,
            help="Specs folder, registered at start; uploads are saved here.",
            metavar="DIR",
        ),
    ] = Path("specs"),
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            "-w",
            envvar=WORKERS_ENV,
            min=1,
            help="Most runs executed at once (by each worker process with --worker-processes); "
            "above 10 only while the worker's core has room.",
        ),
    ] = 10,
    worker_processes: Annotated[
        int,
        typer.Option(
            "--worker-processes",
            envvar=WORKER_PROCESSES_ENV,
            min=0,
            help="Run the workers in this many child processes, so graphs and the API use "
            "different cores; 0 runs them in this process.",
        ),
    ] = 0,
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
    no_workers: Annotated[
        bool,
        typer.Option(
            "--no-workers", help="Serve the API only; `plait worker` processes run the runs."
        ),
    ] = False,
    max_body_bytes: Annotated[
        int,
        typer.Option(
            "--max-body-bytes",
            envvar=MAX_BODY_ENV,
            min=1024,
            help="Largest request body accepted (larger ones get 413).",
        ),
    ] = 1024 * 1024,
    keep_alive_seconds: Annotated[
        int,
        typer.Option(
            "--keep-alive-seconds",
            envvar=KEEP_ALIVE_ENV,
            min=1,
            help="How long an idle client connection stays open; keep it above the idle "
            "timeout of any proxy or client pool in front.",
        ),
    ] = DEFAULT_KEEP_ALIVE_SECONDS,
    webhook_allow_private: Annotated[
        bool,
        typer.Option(
            "--webhook-allow-private",
            help="Let runs' webhooks reach private, loopback and link-local addresses "
            "(default: refused with 422; PLAIT_WEBHOOK_ALLOW_CIDRS allows chosen networks).",
        ),
    ] = False,
    cors_origins: Annotated[
        list[str] | None,
        typer.Option(
            "--cors-origin",
            envvar=CORS_ORIGINS_ENV,
            metavar="ORIGIN",
            help="An origin (scheme://host[:port]) whose browser pages may call the API; "
            "repeat it, or * for any (PLAIT_CORS_ORIGINS takes a comma-separated list).",
            show_default=False,
        ),
    ] = None,
    cors_origin_regex: Annotated[
        str | None,
        typer.Option(
            "--cors-origin-regex",
            envvar=CORS_ORIGIN_REGEX_ENV,
            help="Origins allowed as a regular expression of the whole origin; default any "
            "port of localhost, 127.0.0.1 and [::1]; '' for none.",
            show_default=False,
        ),
    ] = None,
    cors_credentials: Annotated[
        bool,
        typer.Option(
            "--cors-credentials",
            envvar=CORS_CREDENTIALS_ENV,
            help="Let allowed origins send cookies and HTTP auth too (x-api-key needs none).",
        ),
    ] = False,
    log_level: Annotated[
        str | None,
        typer.Option(
            "--log-level",
            help="Level of every logger, uvicorn's too (debug, info, warning...); "
            "default PLAIT_LOG_LEVEL, else info.",
        ),
    ] = None,
) -> None:
    """Serve graphs over HTTP: assistants, threads, runs with SSE streams, approvals.

    Postgres is PLAIT_DATABASE_URL, or the embedded server under .plait/ when unset.
    OpenAPI docs at /docs. SIGTERM hands running runs back to the queue.
    """
    # Imported here: the other commands need not load FastAPI, uvicorn and LangGraph (nor logging).
    import logging

    import uvicorn

    from plait.engine.observability import configure_tracing
    from plait.server.app import create_app
    from plait.server.cli.collector import tune_for_serving
    from plait.server.operations.logs import configure_logging

    try:
        from_env = Settings.from_env()  # PLAIT_CORS_ORIGINS can be malformed too
        cors = CorsPolicy(
            origins=parse_origins(",".join(cors_origins or ())),
            origin_regex=from_env.cors.origin_regex
            if cors_origin_regex is None
            else cors_origin_regex,
            credentials=cors_credentials,
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    settings = dataclasses.replace(
        from_env,
        cors=cors,
        specs_dir=specs,
        workers=0 if no_workers else workers,
        worker_processes=worker_processes,
        max_attempts=max_attempts,
        host=host,
        port=port,
        max_body_bytes=max_body_bytes,
    )
    if webhook_allow_private:
        settings = dataclasses.replace(
            settings, webhooks=dataclasses.replace(settings.webhooks, allow_private=True)
        )
    # JSON lines (or text on a terminal) for every logger, uvicorn's too: docs/observability.md.
    try:
        configure_logging(level=log_level)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    configure_tracing()
    # uvicorn's loggers at the level just resolved (option, PLAIT_LOG_LEVEL or INFO).
    level = logging.getLogger().level
    app = create_app(settings)
    tune_for_serving()  # everything is imported by now
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=level,
        log_config=None,
        timeout_keep_alive=keep_alive_seconds,
    )
