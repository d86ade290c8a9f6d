"""The Plait HTTP server: ``create_app(settings)`` builds the FastAPI app.

The lifespan opens the Postgres pool (``PLAIT_DATABASE_URL`` or the embedded
server), applies migrations, stores the specs folder's graphs in the
registry (invalid specs are logged with their issues; the server still
starts), starts the journal listener that fans run events out to SSE clients,
and starts ``settings.workers`` in-process workers (none with ``--no-workers``;
in ``settings.worker_processes`` child processes with ``--worker-processes``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import swagger_ui
from fastapi import Depends, FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

from plait.engine.protected import protect
from plait.engine.store import database_url, migrate, open_item_store, open_pool, release_embedded
from plait.server.a2a import routes as a2a_routes
from plait.server.a2a.routes import a2a_hub
from plait.server.api import (
    approvals,
    assistants,
    audit,
    crons,
    drafts,
    evaluation,
    events,
    graphs,
    health,
    recordings,
    rollouts,
    runs,
    state,
    store,
    tenants,
    thread_stream,
    threads,
    tool_limits,
    upgrades,
)
from plait.server.api import metrics as metrics_api
from plait.server.api.deps import Services
from plait.server.api.health import plait_version
from plait.server.auth.keys import Authenticator, authenticate
from plait.server.graphs import catalog
from plait.server.graphs.spec_checks import SpecChecks
from plait.server.graphs.versions import sync_folder
from plait.server.http import problems
from plait.server.http.cors import install_cors
from plait.server.http.request_limits import RequestLimits
from plait.server.operations import metrics
from plait.server.queue.defaults import run_connections
from plait.server.queue.journal import JournalListener
from plait.server.settings import Settings
from plait.server.workers.execution import GraphCache
from plait.server.workers.processes import WorkerProcesses
from plait.server.workers.worker import Worker

logger = logging.getLogger("plait.server")

#: Swagger UI's files, shipped in the swagger-ui-py wheel: /docs needs no network.
_SWAGGER_STATIC = Path(swagger_ui.__file__).parent / "static"


def create_app(settings: Settings | None = None) -> FastAPI:
    """The Plait API app for ``settings`` (default: from the environment)."""
    settings = settings or Settings.from_env()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with _services(settings) as services, a2a_hub(services) as hub:
            app.state.services = services
            app.state.a2a = hub  # graphs served over A2A (server/a2a)
            yield

    app = FastAPI(
        title="Plait",
        version=plait_version(),
        summary="Agent teams as versioned YAML graphs, run durably on Postgres.",
        description=(
            "The LangGraph Agent Server protocol (assistants, threads, runs, state, SSE "
            "streams) plus Plait's graph registry, approvals inbox and run journal. "
            "Errors are RFC 9457 `application/problem+json`."
        ),
        lifespan=lifespan,
        # /docs is served below from local files instead of the CDN FastAPI uses.
        docs_url=None,
        redoc_url=None,
    )
    problems.install(app)
    # Outside every route: oversized bodies, NUL in URLs and odd JSON never reach one.
    app.add_middleware(RequestLimits, max_body_bytes=settings.max_body_bytes)
    install_cors(app, settings.cors)  # outermost: refusals above reach front ends readable
    app.include_router(health.router)
    # Scraped like /ok, with no key: see docs/observability.md.
    metrics.install()  # the engine observer and the breaker collector, once per process
    app.include_router(metrics_api.router)
    # Every API route but health needs a key once keys exist (server/auth/keys.py).
    protected = [Depends(authenticate)]
    routers = (
        assistants,
        threads,
        upgrades,
        state,
        crons,
        runs,
        store,
        graphs,
        rollouts,
        drafts,
        approvals,
        events,
        audit,
        evaluation,
        recordings,
    )
    documented = (*routers, tenants, tool_limits, thread_stream, a2a_routes)
    # Matched in order, each router a regex per route for every request: the run routes,
    # which every run and resume goes through, first (no path of another router is
    # theirs: tests/unit/server/test_route_order.py). /docs keeps the order above.
    for module in sorted(documented, key=lambda module: module is not runs):
        app.include_router(module.router, dependencies=protected)
    shown = (health, metrics_api, *documented)
    tags = dict.fromkeys(str(tag) for module in shown for tag in module.router.tags)
    app.openapi_tags = [{"name": tag} for tag in tags]
    _add_docs(app)
    _add_editor(app, settings.editor_dir)
    return app


@contextlib.asynccontextmanager
async def _services(settings: Settings) -> AsyncIterator[Services]:
    # database_url() may start the embedded server: a blocking call.
    url = settings.database_url
    if url is None:
        url = await asyncio.to_thread(database_url)
    # Each run an in-process worker executes needs a connection now and then
    # (child worker processes have pools of their own).
    in_process = settings.workers > 0 and settings.worker_processes == 0
    max_size = settings.pool_max_size + (run_connections(settings.workers) if in_process else 0)
    protect(settings.admin_key)  # never a secret of any spec (the database URL: open_pool)
    async with await open_pool(url, max_size=max_size) as pool:
        await migrate(pool)
        for issue in await sync_folder(pool, settings.specs_dir):
            log = logger.error if issue.severity == "error" else logger.warning
            log("spec not registered: %s", issue.format())
        listener = JournalListener(pool)
        # What runs' creations read of the graph versions and rollouts is kept
        # until a change is announced on the listener's connection (decision 115).
        listener.watch(catalog.CHANGED, catalog.attach(pool).changed)
        await listener.start()
        specs = SpecChecks(settings.spec_processes, settings.spec_check_seconds)
        specs.start()
        services = Services(
            settings=settings,
            pool=pool,
            listener=listener,
            graphs=GraphCache(pool, settings.specs_dir),
            specs=specs,
            items=open_item_store(pool),
            auth=Authenticator(settings.admin_key, settings.auth_cache_seconds),
            creations=asyncio.Semaphore(max(1, settings.pool_max_size // 3)),
        )
        # One worker executes up to `workers` runs at once (a Worker is
        # concurrent by itself; several in one process would only add LISTEN
        # connections and claim queries). With worker processes it runs in
        # children instead (server/workers/processes.py).
        worker = (
            Worker(
                pool,
                concurrency=settings.workers,
                specs_dir=settings.specs_dir,
                max_attempts=settings.max_attempts,
                webhook_policy=settings.webhooks,
                listener=listener,
            )
            if in_process
            else None
        )
        services.worker = worker
        worker_task = asyncio.create_task(worker.run()) if worker is not None else None
        children = contextlib.AsyncExitStack()
        if settings.workers > 0 and settings.worker_processes > 0:
            processes = WorkerProcesses(
                settings.worker_processes,
                concurrency=settings.workers,
                specs_dir=settings.specs_dir,
                url=url,
                max_attempts=settings.max_attempts,
                webhook_policy=settings.webhooks,
            )
            await children.enter_async_context(processes.running())
            services.worker_metrics = processes.metrics_dir
        try:
            yield services
        finally:
            await children.aclose()  # the children hand their runs back first
            if worker is not None and worker_task is not None:
                worker.stop()  # hands unfinished runs back to the queue
                await worker_task
            for task in list(services.background):
                task.cancel()
            await asyncio.gather(*services.background, return_exceptions=True)
            await listener.stop()
            catalog.detach(pool)
            await asyncio.to_thread(specs.close)
    # After the pool is closed: the embedded server (if any) may stop now.
    await asyncio.to_thread(release_embedded)


def _add_docs(app: FastAPI) -> None:
    app.mount("/docs/static", StaticFiles(directory=_SWAGGER_STATIC), name="swagger-static")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title="Plait API",
            swagger_js_url="/docs/static/swagger-ui-bundle.js",
            swagger_css_url="/docs/static/swagger-ui.css",
            swagger_favicon_url="/docs/static/favicon-32x32.png",
        )


def _add_editor(app: FastAPI, editor_dir: Path) -> None:
    """Serve the built editor (``npm run build``) at ``/``; its hash routes need no server."""
    index = editor_dir / "index.html"

    @app.get("/", include_in_schema=False)
    async def editor() -> Response:
        if not index.is_file():
            return HTMLResponse(
                "<!doctype html><title>Plait</title><p>The editor is not built. Run "
                "<code>./dev start</code> (or <code>npm ci && npm run build</code>) and reload. "
                'The API is at <a href="/docs">/docs</a>.</p>',
                status_code=503,
            )
        return FileResponse(index, headers={"Cache-Control": "no-cache"})

    # Vite names every asset by its content hash, so they are immutable.
    app.mount(
        "/assets",
        StaticFiles(directory=editor_dir / "assets", check_dir=False),
        name="editor-assets",
    )
