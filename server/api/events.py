"""A run's event journal as JSON (``GET /runs/{run_id}/events``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from plait.engine.store import Pool
from plait.server.api.deps import Svc
from plait.server.auth.keys import Tenant
from plait.server.http.problems import not_found
from plait.server.queue.runs import get_run

router = APIRouter(tags=["runs"])


@router.get("/runs/{run_id}/events", summary="A run's events (the journal)")
async def run_events(
    run_id: str,
    services: Svc,
    tenant: Tenant,
    after: Annotated[int, Query(ge=0, description="Return events with a seq above this.")] = 0,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> list[dict[str, Any]]:
    """The events the run's stream sends, each with its ``seq`` (the SSE id), in order,
    and ``at``: when the server journaled it (the editor's run timeline reads it).

    Also the ``error`` and ``end`` of a dead letter that a requeue continued
    past, marked ``"superseded": true``: streams skip them.
    """
    if await get_run(services.pool, run_id, tenant=tenant) is None:
        raise not_found(f"run {run_id}")
    return await _read(services.pool, run_id, after, limit)


async def _read(pool: Pool, run_id: str, after: int, limit: int) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT seq, event, data, superseded, created_at FROM plait_run_events "
            "WHERE run_id = %s AND seq > %s ORDER BY seq LIMIT %s",
            (run_id, after, limit),
        )
        rows = await cursor.fetchall()
    events: list[dict[str, Any]] = []
    for row in rows:
        shown = {
            "seq": row["seq"],
            "event": row["event"],
            "data": row["data"],
            "at": row["created_at"].isoformat(),
        }
        events.append({**shown, "superseded": True} if row["superseded"] else shown)
    return events
