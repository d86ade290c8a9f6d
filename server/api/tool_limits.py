"""Tools' caps and rate limits as they stand now, and pausing or resuming a tool by hand.

``GET /tool-limits`` lists the caller's tenant's limited keys (a tool's or an
MCP server's ``limits``; docs/governance.md): what the last call declared, calls
in flight and waiting across all workers, and a pause with its reason.
``POST /tool-limits/pause`` and ``/resume`` let a person stop a misbehaving tool
for everyone of the tenant, or lift a pause a ``Retry-After`` set;
``POST /tool-limits/caps`` sets the operator's caps, which tighten what specs declare.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from plait.engine.spec import RATE_PATTERN, rate_per_second
from plait.engine.store import LimitState, cap_tool, limit_states, pause_tool, resume_tool
from plait.server.api.deps import Svc
from plait.server.auth.keys import Tenant
from plait.server.http.problems import not_found

router = APIRouter(tags=["tool limits"])


class ToolLimit(BaseModel):
    """One limited key of the tenant, now."""

    key: str = Field(
        description="`tool:<module:function>`, `mcp:<server>` or `mcp:<server>#<tool>`."
    )
    concurrency: int | None = Field(description="Calls at once the last call declared.")
    rate: str | None = Field(description='Calls per time the last call declared ("10/s").')
    in_flight: int = Field(description="Calls holding a slot now, across all workers.")
    waiting: int = Field(description="Calls waiting for their turn now, across all workers.")
    cap_concurrency: int | None = Field(description="The operator's cap on calls at once.")
    cap_rate: str | None = Field(description="The operator's cap on calls per time.")
    paused_until: datetime | None = Field(description="No call starts before this (a pause).")
    paused_reason: str | None = Field(description="What paused it (the 429's error, a person).")
    updated_at: datetime = Field(description="When a call last took its turn.")

    @classmethod
    def of(cls, state: LimitState) -> ToolLimit:
        """The API's view of a stored state."""
        return cls(
            key=state.key,
            concurrency=state.concurrency,
            rate=state.rate,
            in_flight=state.in_flight,
            waiting=state.waiting,
            cap_concurrency=state.cap_concurrency,
            cap_rate=state.cap_rate,
            paused_until=state.paused_until,
            paused_reason=state.paused_reason,
            updated_at=state.updated_at,
        )


class PauseBody(BaseModel):
    """Body of ``POST /tool-limits/pause``."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(max_length=2000, description="A key of `GET /tool-limits`.")
    seconds: Annotated[float, Field(gt=0, le=86400)] = Field(description="How long, from now.")
    reason: str = Field(default="paused by hand", max_length=500)


class CapsBody(BaseModel):
    """Body of ``POST /tool-limits/caps``: ``null`` (or absent) removes a cap."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(max_length=2000, description="A key of `GET /tool-limits`, or one to come.")
    concurrency: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="At most this many calls at once, whatever specs declare."
    )
    rate: Annotated[str, Field(pattern=RATE_PATTERN)] | None = Field(
        default=None, description='At most this many calls per time ("10/s", "600/min").'
    )


class ResumeBody(BaseModel):
    """Body of ``POST /tool-limits/resume``."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(max_length=2000, description="A key of `GET /tool-limits`.")


@router.get("/tool-limits", summary="Your tenant's limited tools, now")
async def list_tool_limits(services: Svc, tenant: Tenant) -> list[ToolLimit]:
    """Every key of the caller's tenant with `limits`: declared caps, calls in flight and
    waiting across all workers, and any pause."""
    async with services.pool.connection() as conn:
        return [ToolLimit.of(state) for state in await limit_states(conn, tenant)]


@router.post("/tool-limits/pause", summary="Pause a limited tool for every run of your tenant")
async def pause(body: PauseBody, services: Svc, tenant: Tenant) -> ToolLimit:
    """No call of ``key`` starts for ``seconds`` (a later pause already set is kept)."""
    if await pause_tool(services.pool, tenant, [body.key], body.seconds, body.reason) is None:
        raise not_found(f"tool limit {body.key!r}")
    return await _one(services, tenant, body.key)


@router.post("/tool-limits/caps", summary="Cap a tool for every run of your tenant")
async def set_caps(body: CapsBody, services: Svc, tenant: Tenant) -> ToolLimit:
    """The operator's caps on ``key``: calls that are limited by it (a spec's `limits`) are
    held to the stricter of what they declare and these."""
    interval = 1.0 / rate_per_second(body.rate) if body.rate is not None else None
    await cap_tool(
        services.pool,
        tenant,
        body.key,
        concurrency=body.concurrency,
        rate=body.rate,
        interval=interval,
    )
    return await _one(services, tenant, body.key)


@router.post("/tool-limits/resume", summary="End a tool's pause now")
async def resume(body: ResumeBody, services: Svc, tenant: Tenant) -> ToolLimit:
    """Calls of ``key`` start again at once (their limits still hold)."""
    if not await resume_tool(services.pool, tenant, body.key):
        raise not_found(f"tool limit {body.key!r}")
    return await _one(services, tenant, body.key)


async def _one(services: Svc, tenant: str, key: str) -> ToolLimit:
    async with services.pool.connection() as conn:
        states = await limit_states(conn, tenant)
    found = next((state for state in states if state.key == key), None)
    if found is None:
        raise not_found(f"tool limit {key!r}")
    return ToolLimit.of(found)
