"""A run's event journal as JSON (``GET /runs/{run_id}/events``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from server.api.deps import Svc
from server.auth.keys import Tenant
from server.journal import JournalEvent, read_after
from server.problems import not_found
from server.queue.runs import get_run

router = APIRouter(tags=["runs"])


@router.get("/runs/{run_id}/events", summary="A run's events (the journal)")
async def run_events(
    run_id: str,
    services: Svc,
    tenant: Tenant,
    after: Annotated[int, Query(ge=0, description="Return events with a seq above this.")] = 0,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> list[dict[str, Any]]:
    """The events the run's stream sends, each with its ``seq`` (the SSE id), in order.

    Also the ``error`` and ``end`` of a dead letter that a requeue continued
    past, marked ``"superseded": true``: streams skip them.
    """
    if await get_run(services.pool, run_id, tenant=tenant) is None:
        raise not_found(f"run {run_id}")
    events = await read_after(services.pool, run_id, after, limit)
    return [_event(event) for event in events]


def _event(event: JournalEvent) -> dict[str, Any]:
    shown = {"seq": event.seq, "event": event.event, "data": event.data}
    return {**shown, "superseded": True} if event.superseded else shown
