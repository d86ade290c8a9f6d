"""Threads: create, get, update metadata, delete, search (``/threads...``).

Thread ids here are the client's: each route turns them into the stored id of
the caller's tenant (``plait.server.queue.threads.stored_thread_id``) and back, so
the same id in another tenant is another thread and answers as a free id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

from plait.server.api.checkpoints import thread_state
from plait.server.api.deps import Services, Svc
from plait.server.auth.keys import Tenant
from plait.server.http.problems import Problem, not_found
from plait.server.queue import threads

router = APIRouter(prefix="/threads", tags=["threads"])


class ThreadCreate(BaseModel):
    """Body of ``POST /threads``; ``ttl`` is accepted and ignored (threads are kept)."""

    model_config = ConfigDict(extra="ignore")

    thread_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    if_exists: Literal["raise", "do_nothing"] = "raise"
    supersteps: list[Any] | None = None

    @field_validator("thread_id")
    @classmethod
    def _client_id(cls, thread_id: str | None) -> str | None:
        return threads.check_client_thread_id(thread_id) if thread_id else thread_id


class ThreadPatch(BaseModel):
    """Body of ``PATCH /threads/{id}``."""

    model_config = ConfigDict(extra="ignore")

    metadata: dict[str, Any] = Field(default_factory=dict)


class ThreadSearch(BaseModel):
    """Body of ``POST /threads/search``."""

    model_config = ConfigDict(extra="ignore")

    metadata: dict[str, Any] | None = None
    values: dict[str, Any] | None = None
    ids: list[str] | None = None
    status: Literal["idle", "busy", "interrupted", "error"] | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] = 10
    offset: Annotated[int, Field(ge=0)] = 0
    sort_by: Literal["thread_id", "status", "created_at", "updated_at"] = "created_at"
    sort_order: Literal["asc", "desc"] = "desc"
    select: list[str] | None = None


async def thread_to_api(services: Services, thread: Mapping[str, Any]) -> dict[str, Any]:
    """The protocol's Thread: the stored row (with the client's id) plus ``values`` and
    ``interrupts`` from checkpoints."""
    state = await thread_state(services, thread)
    interrupts = {task["id"]: task["interrupts"] for task in state["tasks"] if task["interrupts"]}
    shown = threads.client_thread_id(thread["tenant_id"], thread["thread_id"])
    return {**thread, "thread_id": shown, "values": state["values"], "interrupts": interrupts}


async def get_thread_or_404(services: Services, thread_id: str, tenant: str) -> dict[str, Any]:
    """The tenant's thread the client calls ``thread_id`` (its stored row), or a 404 problem
    (as for any id the tenant has no thread of)."""
    stored = threads.stored_thread_id(tenant, thread_id)
    thread = await threads.get_thread(services.pool, stored, tenant)
    if thread is None:
        raise not_found(f"thread {thread_id}")
    return thread


@router.post("", summary="Create a thread")
async def create_thread(body: ThreadCreate, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """A new thread (no graph until its first run); ``if_exists`` decides about a known id."""
    if body.supersteps:
        raise Problem(
            422,
            "supersteps are not supported: create the thread, then POST /threads/{id}/state",
            kind="not-supported",
        )
    thread = await threads.create_thread(
        services.pool,
        thread_id=threads.stored_thread_id(tenant, body.thread_id) if body.thread_id else None,
        metadata=body.metadata,
        if_exists=body.if_exists,
        tenant=tenant,
    )
    return await thread_to_api(services, thread)


@router.post("/search", summary="Search threads")
async def search_threads(body: ThreadSearch, services: Svc, tenant: Tenant) -> list[dict[str, Any]]:
    """Threads by metadata (containment), status and ids; ``values`` filters the page found."""
    found = await threads.search_threads(
        services.pool,
        metadata=body.metadata,
        status=body.status,
        ids=[threads.stored_thread_id(tenant, tid) for tid in body.ids] if body.ids else body.ids,
        limit=body.limit,
        offset=body.offset,
        sort_by=body.sort_by,
        sort_order=body.sort_order,
        tenant=tenant,
    )
    results = [await thread_to_api(services, thread) for thread in found]
    if body.values:
        wanted = body.values
        results = [
            item for item in results if all(item["values"].get(k) == v for k, v in wanted.items())
        ]
    if body.select:
        results = [{key: item[key] for key in body.select if key in item} for item in results]
    return results


@router.get("/{thread_id}", summary="Get a thread")
async def get_thread(thread_id: str, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """The thread with its current values and pending interrupts."""
    return await thread_to_api(services, await get_thread_or_404(services, thread_id, tenant))


@router.patch("/{thread_id}", summary="Update a thread's metadata")
async def patch_thread(
    thread_id: str, body: ThreadPatch, services: Svc, tenant: Tenant
) -> dict[str, Any]:
    """Merge ``metadata`` into the thread's (top-level keys replace)."""
    stored = threads.stored_thread_id(tenant, thread_id)
    thread = await threads.update_thread(
        services.pool, stored, metadata=body.metadata, tenant=tenant
    )
    return await thread_to_api(services, thread)


@router.delete("/{thread_id}", summary="Delete a thread", status_code=204)
async def delete_thread(thread_id: str, services: Svc, tenant: Tenant) -> Response:
    """Delete the thread with its runs, journals, approvals and checkpoints."""
    await threads.delete_thread(services.pool, threads.stored_thread_id(tenant, thread_id), tenant)
    return Response(status_code=204)
