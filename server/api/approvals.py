"""The approvals inbox: parked interrupts across threads, and decisions on them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict

from plait.server.api.deps import Svc
from plait.server.approvals import records
from plait.server.auth.keys import Tenant, authenticate
from plait.server.auth.store import Principal
from plait.server.http.problems import not_found
from plait.server.queue import decisions, threads

router = APIRouter(prefix="/approvals", tags=["approvals"])

ApprovalStatus = Literal["pending", "approved", "rejected", "edited", "expired", "decided", "all"]


class DecisionBody(BaseModel):
    """Body of ``POST /approvals/{id}/decision``: the decision and who made it.

    ``decision``, ``arguments`` and ``comment`` are validated by the
    approvals repository (the spec language's ``Decision``), so the API and
    the CLI accept exactly the same decisions.
    """

    model_config = ConfigDict(extra="forbid")

    decision: str
    arguments: dict[str, Any] | None = None
    comment: str | None = None
    actor: str | None = None


def approval_to_api(approval: dict[str, Any]) -> dict[str, Any]:
    """An approval as the inbox shows it (its thread by the client's id); ``budget_used`` is
    null when the spec sets no budget."""
    shown = threads.client_thread_id(approval["tenant_id"], approval["thread_id"])
    return {**approval, "thread_id": shown}


@router.get("", summary="List approvals")
async def list_approvals(
    services: Svc,
    tenant: Tenant,
    status: ApprovalStatus = "pending",
    thread_id: str | None = None,
    limit: int = 100,
    offset: int = 0,
    order: Literal["oldest", "newest"] = "oldest",
) -> list[dict[str, Any]]:
    """Approvals across threads, oldest first (``order=newest`` for the reverse).

    ``status=all`` lists every status, ``status=decided`` every decided or expired
    one (with ``decided_by``, ``decided_at``, ``decision`` and ``resume_run_id``).
    """
    found = await records.list_approvals(
        services.pool,
        None if status == "all" else status,
        thread_id=threads.stored_thread_id(tenant, thread_id) if thread_id else None,
        limit=limit,
        offset=offset,
        tenant=tenant,
        newest_first=order == "newest",
    )
    return [approval_to_api(item) for item in found]


@router.get("/{approval_id}", summary="Get an approval")
async def get_approval(approval_id: str, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """One approval, with its decision once made."""
    found = await records.get_approval(services.pool, approval_id, tenant=tenant)
    if found is None:
        raise not_found(f"approval {approval_id}")
    return approval_to_api(found)


@router.post("/{approval_id}/decision", summary="Decide an approval")
async def decide(
    approval_id: str,
    body: DecisionBody,
    services: Svc,
    principal: Annotated[Principal, Depends(authenticate)],
) -> dict[str, Any]:
    """Approve, reject or edit; the thread resumes in a new run, returned with the approval.

    ``decided_by`` is the body's ``actor``; with API keys on, the key that decided
    is recorded too, by id and name (``alice (key:k1 'ops laptop')``), so the
    audit trail does not rest on a name the client chose.
    """
    decision = body.model_dump(exclude_none=True, exclude={"actor"})
    actor = body.actor
    if principal.key_id is not None:
        key = f"key:{principal.key_id}"
        if principal.key_name:
            key = f"{key} '{principal.key_name}'"
        actor = f"{actor} ({key})" if actor else key
    approval, run = await decisions.decide(
        services.pool, approval_id, decision, actor, tenant=principal.tenant
    )
    return {"approval": approval_to_api(approval), "run": run.to_api()}
