"""Runs the API creates, started at once by the same process's worker when it has room.

A run created through the queue waits for its notification to reach a worker,
for that worker's claim transaction, and for the claim's round trip; with the
worker in the API's own process (``plait serve``'s default) none of that is
needed when the worker has a free slot and a claim would have taken the run
first anyway. :func:`create_and_start` creates such a run already claimed
(``runs.DirectClaim``: the statement checks the queue and the tenant's cap)
and hands it to the worker; any other run is queued as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from plait.engine.store import Pool
from plait.server.queue import runs
from plait.server.queue.runs import RunCreation
from plait.server.workers.worker import Worker


@asynccontextmanager
async def create_and_start(
    worker: Worker | None, pool: Pool, **creating: Any
) -> AsyncIterator[RunCreation]:
    """:func:`runs.creating_run` with ``creating``'s arguments and, when ``worker`` (this
    process's) has room, a slot of it reserved: a run the block inserts may come back
    claimed for it, and is then started on it once committed.

    Read the outcome with :meth:`RunCreation.created` after the block.
    """
    direct = worker.reserve_direct() if worker is not None else None
    try:
        async with runs.creating_run(pool, direct=direct, **creating) as creation:
            yield creation
    except BaseException:
        if worker is not None and direct is not None:
            worker.release_reserved()
        raise
    if worker is None or direct is None:
        return
    started = False
    try:
        run, created = creation.created()
        # A repeated request (idempotency key) gets the first run back: never started twice.
        if created and run.status == "running" and run.lease_owner == direct.worker_id:
            worker.adopt(run)
            started = True
    finally:
        if not started:
            worker.release_reserved()
