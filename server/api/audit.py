"""A run's audit trail as JSON (``GET /runs/{run_id}/audit``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from plait.engine.store import read_run_audit
from plait.server.api.deps import Svc
from plait.server.auth.keys import Tenant
from plait.server.http.problems import not_found
from plait.server.queue.runs import get_run

router = APIRouter(tags=["runs"])


@router.get("/runs/{run_id}/audit", summary="A run's audit trail")
async def run_audit(run_id: str, services: Svc, tenant: Tenant) -> list[dict[str, Any]]:
    """What the run did that the audit trail keeps, in order: tool calls, approval
    decisions, policy refusals, compensations and, where the spec opted in
    (``spec.audit.model_calls``), each model call's messages and reply with the
    run's secrets masked. Each record has ``kind``, ``node``, ``step`` (the task's
    namespace), ``tool``, ``actor``, ``detail`` and ``created_at``.
    """
    if await get_run(services.pool, run_id, tenant=tenant) is None:
        raise not_found(f"run {run_id}")
    return await read_run_audit(services.pool, run_id, tenant)
