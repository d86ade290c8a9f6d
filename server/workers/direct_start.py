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

from typing import Any

from plait.engine.store import Pool
from plait.server.queue import runs
from plait.server.queue.runs import Run
from plait.server.workers.worker import Worker


async def create_and_start(worker: Worker | None, pool: Pool, **create: Any) -> tuple[Run, bool]:
    """:func:`runs.create_run` with ``create``'s arguments; the run is started on ``worker``
    (this process's) when it came back claimed for it. Returns what ``create_run`` returns."""
    direct = worker.reserve_direct() if worker is not None else None
    if worker is None or direct is None:
        return await runs.create_run(pool, **create)
    try:
        run, created = await runs.create_run(pool, direct=direct, **create)
    except BaseException:
        worker.release_reserved()
        raise
    # A repeated request (idempotency key) gets the first run back: never started twice.
    if created and run.status == "running" and run.lease_owner == direct.worker_id:
        worker.adopt(run)
    else:
        worker.release_reserved()
    return run, created
