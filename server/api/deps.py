"""What every router needs from the running app: settings, pool, event listener."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request
from langgraph.store.postgres.aio import AsyncPostgresStore

from plait.engine.store import Pool
from plait.server.auth.keys import Authenticator
from plait.server.settings import Settings

if TYPE_CHECKING:
    from plait.server.graphs.spec_checks import SpecChecks
    from plait.server.queue.journal import JournalListener
    from plait.server.workers.execution import GraphCache
    from plait.server.workers.worker import Worker


@dataclass
class Services:
    """The process-wide objects the lifespan opens, shared by every request."""

    settings: Settings
    pool: Pool
    listener: JournalListener
    #: Compiled graph versions, so a request lists the registry only on a version's first use.
    graphs: GraphCache
    #: Reads and lints uploaded YAML in worker processes (server/graphs/spec_checks.py).
    specs: SpecChecks
    #: LangGraph's long-term store: ``/store`` (per tenant: engine/store/items.py).
    items: AsyncPostgresStore
    #: Runs being created at once by the API (``server/api/runs.py``): each holds a pooled
    #: connection, under its thread's lock, while its graph version is read on up to two
    #: more, so only a third of the pool may be held so, or a burst of creations would hold
    #: every connection and wait for the rest (the app sizes it from ``pool_max_size``).
    creations: asyncio.Semaphore
    #: Resolves ``x-api-key`` to a tenant (server/auth/keys.py).
    auth: Authenticator = field(default_factory=Authenticator)
    #: The worker in this process (``plait serve``'s default), which starts the runs the
    #: API creates at once when it has room (server/workers/direct_start.py); None without.
    worker: Worker | None = None
    #: Where the worker processes of ``--worker-processes`` keep their metrics (served
    #: by ``GET /metrics``); None without them.
    worker_metrics: Path | None = None
    # Follow-up work a request starts and does not wait for (deleting a
    # stateless run's thread); kept here so it is not garbage-collected and the
    # lifespan can finish it at shutdown.
    background: set[asyncio.Task[None]] = field(default_factory=set)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` after the response, tracked until it ends."""
        task = asyncio.get_running_loop().create_task(work)
        self.background.add(task)
        task.add_done_callback(self.background.discard)


async def get_services(request: Request) -> Services:
    """The app's :class:`Services` (set by the lifespan); async, so FastAPI calls it inline."""
    services: Services = request.app.state.services
    return services


Svc = Annotated[Services, Depends(get_services)]
