"""``GET /metrics``: Prometheus exposition of this process's metrics and the queue's."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST

from plait.server.api.deps import Svc
from plait.server.operations import metrics

router = APIRouter(tags=["health"])


# Not in the OpenAPI document: it is for Prometheus, not for API clients.
@router.get("/metrics", include_in_schema=False)
async def prometheus_metrics(services: Svc) -> Response:
    """Runs, queue, approvals (from Postgres) and this process's steps, calls, streams,
    breakers; with ``--worker-processes``, the steps, calls and runs of its children too.

    With Postgres down the process's own metrics still go out, with ``plait_database_up 0``.

    Metric names and labels: docs/observability.md.
    """
    queue = await metrics.scrape_database(services.pool)
    body = metrics.exposition(queue, services.worker_metrics)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
