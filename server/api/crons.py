"""Crons as the Agent Server serves them (``/runs/crons``, ``/threads/{id}/runs/crons``).

A cron is a schedule plus the fields of a run-creating request; workers fire
it (server/workers/cron_firer.py). Crons are the caller's tenant's: another tenant's cron
id answers 404, as an unknown one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from plait.server.api.assistants import resolve_assistant
from plait.server.api.deps import Services, Svc
from plait.server.api.runs import RunCreate, check_webhook, run_kwargs
from plait.server.api.threads import get_thread_or_404
from plait.server.auth.keys import Tenant
from plait.server.http.problems import Problem, not_found
from plait.server.queue import crons, threads
from plait.server.queue.crons import Cron, CronFields, SortBy
from plait.server.workers.cron_firer import ScheduleInvalid, check_schedule, next_time

router = APIRouter(tags=["crons"])

#: The fields of a cron that are not fields of the runs it creates.
_CRON_ONLY = ("schedule", "timezone", "end_time", "enabled", "on_run_completed")


class CronCreate(BaseModel):
    """Body of the cron-creating POSTs: a schedule and a run's fields (``RunCreate``)."""

    model_config = ConfigDict(extra="allow")

    assistant_id: str
    schedule: str
    timezone: str = "UTC"
    end_time: datetime | None = None
    enabled: bool = True
    on_run_completed: Literal["delete", "keep"] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class CronUpdate(BaseModel):
    """Body of ``PATCH /runs/crons/{cron_id}``: what to change (run fields too)."""

    model_config = ConfigDict(extra="allow")

    schedule: str | None = None
    timezone: str | None = None
    end_time: datetime | None = None
    enabled: bool | None = None
    on_run_completed: Literal["delete", "keep"] | None = None
    metadata: dict[str, Any] | None = None


class CronSearch(BaseModel):
    """Body of ``POST /runs/crons/search``."""

    model_config = ConfigDict(extra="ignore")

    assistant_id: str | None = None
    thread_id: str | None = None
    enabled: bool | None = None
    metadata: dict[str, Any] | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] = 10
    offset: Annotated[int, Field(ge=0)] = 0
    sort_by: SortBy = "created_at"
    sort_order: Literal["asc", "desc"] = "desc"
    select: list[str] | None = None


class CronCount(BaseModel):
    """Body of ``POST /runs/crons/count``."""

    model_config = ConfigDict(extra="ignore")

    assistant_id: str | None = None
    thread_id: str | None = None
    metadata: dict[str, Any] | None = None


@router.post("/runs/crons", summary="Create a cron (a new thread for each run)")
async def create_cron(body: CronCreate, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """A cron whose runs each start on a new thread."""
    fields = await _fields(services, tenant, body.model_dump(exclude_unset=True))
    return (await crons.insert(services.pool, tenant, None, fields)).to_api()


@router.post("/threads/{thread_id}/runs/crons", summary="Create a cron on a thread")
async def create_thread_cron(
    thread_id: str, body: CronCreate, services: Svc, tenant: Tenant
) -> dict[str, Any]:
    """A cron whose runs go to the thread, one after another (``multitask_strategy``)."""
    thread = await get_thread_or_404(services, thread_id, tenant)
    fields = await _fields(services, tenant, body.model_dump(exclude_unset=True))
    return (await crons.insert(services.pool, tenant, thread["thread_id"], fields)).to_api()


@router.patch("/runs/crons/{cron_id}", summary="Update a cron")
async def update_cron(
    cron_id: str, body: CronUpdate, services: Svc, tenant: Tenant
) -> dict[str, Any]:
    """Change the schedule, the run's fields or ``enabled``; the next time is computed again."""
    cron = await _cron_or_404(services, cron_id, tenant)
    changes = body.model_dump(exclude_unset=True)
    merged = {
        **cron.payload,
        **{key: getattr(cron, key) for key in _CRON_ONLY},
        "metadata": cron.metadata,
        **changes,
    }
    fields = await _fields(services, tenant, merged)
    updated = await crons.update(services.pool, cron_id, tenant, fields)
    if updated is None:  # deleted meanwhile
        raise not_found(f"cron {cron_id}")
    return updated.to_api()


@router.delete("/runs/crons/{cron_id}", summary="Delete a cron", status_code=204)
async def delete_cron(cron_id: str, services: Svc, tenant: Tenant) -> Response:
    """Delete the cron; runs it created are kept."""
    if not await crons.delete(services.pool, cron_id, tenant):
        raise not_found(f"cron {cron_id}")
    return Response(status_code=204)


@router.post("/runs/crons/search", summary="Search crons")
async def search_crons(body: CronSearch, services: Svc, tenant: Tenant) -> list[dict[str, Any]]:
    """The tenant's crons matching the filters (``metadata`` by containment)."""
    found = await crons.search(
        services.pool,
        tenant,
        assistant_id=body.assistant_id,
        thread_id=threads.stored_thread_id(tenant, body.thread_id) if body.thread_id else None,
        enabled=body.enabled,
        metadata=body.metadata,
        limit=body.limit,
        offset=body.offset,
        sort_by=body.sort_by,
        sort_order=body.sort_order,
    )
    shown = [cron.to_api() for cron in found]
    if body.select:
        shown = [{key: item[key] for key in body.select if key in item} for item in shown]
    return shown


@router.post("/runs/crons/count", summary="Count crons")
async def count_crons(body: CronCount, services: Svc, tenant: Tenant) -> int:
    """How many of the tenant's crons match the filters."""
    return await crons.count(
        services.pool,
        tenant,
        assistant_id=body.assistant_id,
        thread_id=threads.stored_thread_id(tenant, body.thread_id) if body.thread_id else None,
        metadata=body.metadata,
    )


async def _cron_or_404(services: Services, cron_id: str, tenant: str) -> Cron:
    cron = await crons.get(services.pool, cron_id, tenant)
    if cron is None:
        raise not_found(f"cron {cron_id}")
    return cron


async def _fields(services: Services, tenant: str, sent: dict[str, Any]) -> CronFields:
    """A cron's stored fields from what the client sent: checked as a run request is."""
    schedule, timezone = sent["schedule"], sent.get("timezone") or "UTC"
    try:
        check_schedule(schedule, timezone)
    except ScheduleInvalid as invalid:
        raise _invalid(str(invalid), "schedule") from None
    payload = {key: value for key, value in sent.items() if key not in _CRON_ONLY}
    try:
        run = RunCreate.model_validate(payload)
    except ValidationError as invalid:
        first = invalid.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise _invalid(f"{field}: {first['msg']}", field) from None
    if run.expires_at is not None:
        raise _invalid(
            "expires_at: a cron's runs repeat, so one time cannot be their deadline; "
            'give expires_in (seconds, or a duration like "10m") instead',
            "expires_at",
        )
    await resolve_assistant(services, run.assistant_id, tenant)  # 404 when unknown
    if run.webhook is not None:
        await check_webhook(run.webhook, services.settings.webhooks)
    end_time: datetime | None = sent.get("end_time")
    if end_time is not None and end_time.tzinfo is None:
        end_time = end_time.replace(tzinfo=UTC)  # a time without a zone is UTC
    enabled = sent.get("enabled", True)
    return CronFields(
        assistant_id=run.assistant_id,
        schedule=schedule,
        timezone=timezone,
        end_time=end_time,
        enabled=enabled,
        on_run_completed=sent.get("on_run_completed"),
        payload=run.model_dump(mode="json", exclude_unset=True),
        kwargs=run_kwargs(run),
        metadata=sent.get("metadata") or {},
        next_run_at=next_time(schedule, timezone, datetime.now(UTC), end_time),
    )


def _invalid(detail: str, field: str) -> Problem:
    return Problem(
        422,
        f"invalid cron: {detail}",
        kind="request-invalid",
        title="Invalid request",
        errors=[{"loc": ["body", *field.split(".")], "msg": detail}],
    )
