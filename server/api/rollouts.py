"""A graph's rollout for the caller's tenant: set a canary and its share, promote, roll back."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict

from plait.server.api.deps import Services, Svc
from plait.server.auth.keys import Tenant
from plait.server.graphs import rollouts
from plait.server.graphs.rollouts import rollout_to_api
from plait.server.graphs.versions import list_graphs
from plait.server.http.problems import not_found
from plait.server.queue.version_counts import rollout_report

router = APIRouter(prefix="/graphs", tags=["rollouts"])

#: The window of ``GET .../rollout``'s run counts unless ``hours`` says otherwise.
DEFAULT_WINDOW_HOURS = 24


class RolloutSet(BaseModel):
    """``PUT /graphs/{name}/rollout``: omitted ``stable`` keeps the current one (or the
    newest version other than the canary); a ``canary`` needs a ``share`` (0-100)."""

    model_config = ConfigDict(extra="forbid")

    stable: str | None = None
    canary: str | None = None
    share: int | None = None


@router.get("/{name}/rollout", summary="A graph's rollout and the versions that ran")
async def get_rollout(
    name: str,
    services: Svc,
    tenant: Tenant,
    hours: Annotated[int, Query(ge=1, le=24 * 30)] = DEFAULT_WINDOW_HOURS,
) -> dict[str, Any]:
    """The tenant's rollout of ``name`` (``stable``, ``canary`` and ``share`` are null/0
    without one) and, per version, the runs created on it in the last ``hours``."""
    await _known_graph(services, name, tenant)
    return await rollout_report(services.pool, name, tenant, timedelta(hours=hours))


@router.put("/{name}/rollout", summary="Start or change a graph's rollout")
async def put_rollout(name: str, body: RolloutSet, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """Set which versions new threads start on; threads already started stay on theirs."""
    rollout = await rollouts.set_rollout(
        services.pool,
        name,
        tenant=tenant,
        stable=body.stable,
        canary=body.canary,
        share=body.share,
        specs_dir=services.settings.specs_dir,
    )
    return rollout_to_api(name, rollout)


@router.post("/{name}/rollout/promote", summary="Make the canary the stable version")
async def promote(name: str, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """Every new thread starts on the canary from now on; it is the stable version."""
    return rollout_to_api(name, await rollouts.promote(services.pool, name, tenant))


@router.post("/{name}/rollout/rollback", summary="Drop the canary")
async def rollback(name: str, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """New threads start on the stable version again; threads on the canary stay on it."""
    return rollout_to_api(name, await rollouts.rollback(services.pool, name, tenant))


@router.delete("/{name}/rollout", summary="End a graph's rollout", status_code=204)
async def delete_rollout(name: str, services: Svc, tenant: Tenant) -> Response:
    """The graph's bare name means its newest version again for new threads."""
    if not await rollouts.delete_rollout(services.pool, name, tenant):
        raise not_found(f"rollout of {name}", f"{name} has no rollout")
    return Response(status_code=204)


async def _known_graph(services: Services, name: str, tenant: str) -> None:
    graphs = await list_graphs(services.pool, specs_dir=services.settings.specs_dir, tenant=tenant)
    if not any(version.name == name for version in graphs):
        raise not_found(f"graph {name}", f"no graph named {name!r} is registered")
