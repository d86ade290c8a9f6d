"""Upgrading a thread to another version of its graph (``POST /threads/{id}/upgrade``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from plait.engine.run import UpgradeRefused
from plait.server.api.deps import Svc
from plait.server.auth.keys import authenticate
from plait.server.auth.store import Principal
from plait.server.http.problems import Problem, not_found
from plait.server.queue import threads, upgrades

router = APIRouter(prefix="/threads/{thread_id}", tags=["threads"])

#: Why an upgrade is refused -> the problem's title (all 409).
_TITLES = {
    "thread-busy": "Thread busy",
    "not-started": "Thread not started",
    "migration-missing": "Migration missing",
    "no-node": "Node missing in the new version",
    "partly-resumed": "Thread partly resumed",
    "migration-failed": "Migration failed",
    "node-moved": "Node reached another way",
    "in-subgraph": "Thread waits in a subgraph",
}


class UpgradeBody(BaseModel):
    """Body of ``POST /threads/{id}/upgrade``."""

    model_config = ConfigDict(extra="forbid")

    version: Annotated[str, Field(min_length=1, max_length=255)] = Field(
        description="The version of the thread's graph to move the thread to."
    )
    actor: str | None = Field(default=None, max_length=255, description="Who asks (audited).")


@router.post("/upgrade", summary="Move a parked or idle thread to another version of its graph")
async def upgrade_thread(
    thread_id: str,
    body: UpgradeBody,
    services: Svc,
    principal: Annotated[Principal, Depends(authenticate)],
) -> dict[str, Any]:
    """Apply the migration that ``version`` declares from the thread's version: the state
    is mapped, renamed nodes are followed, a pending approval stays pending (with a new
    interrupt id, returned in ``interrupts``), and the thread runs ``version`` from now on.

    Refused with 409 when the thread is running, when ``version`` declares no migration
    from the thread's version (the detail says what to declare), or when the node the
    thread waits on has no counterpart in ``version``.
    """
    actor = body.actor or "api"
    if principal.key_id is not None:
        key = f"key:{principal.key_id}"
        actor = f"{actor} ({key})"
    try:
        return await upgrades.upgrade_thread(
            services.pool,
            services.graphs,
            threads.stored_thread_id(principal.tenant, thread_id),
            body.version,
            tenant=principal.tenant,
            actor=actor,
            specs_dir=services.settings.specs_dir,
        )
    except upgrades.GraphVersionMissing as exc:
        raise not_found("graph version", str(exc)) from None
    except UpgradeRefused as exc:
        raise Problem(409, str(exc), kind=exc.kind, title=_TITLES.get(exc.kind)) from None
