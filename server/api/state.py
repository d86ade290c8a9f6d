"""A thread's state: current, at a checkpoint, history, and updates (``/threads/{id}/state...``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from langgraph.errors import InvalidUpdateError
from pydantic import BaseModel, ConfigDict, Field

from plait.server.api.assistants import resolve_assistant
from plait.server.api.checkpoints import (
    compiled_graph,
    snapshot_to_api,
    thread_config,
    thread_graph_version,
    thread_state,
)
from plait.server.api.deps import Services, Svc
from plait.server.api.threads import get_thread_or_404
from plait.server.auth.keys import Tenant
from plait.server.graphs.versions import GraphVersion
from plait.server.http.problems import Problem
from plait.server.queue.direct_runs import claim_thread
from plait.server.queue.threads import client_thread_id

router = APIRouter(prefix="/threads/{thread_id}", tags=["state"])


class CheckpointRef(BaseModel):
    """A checkpoint of a thread (``checkpoint_ns`` addresses a subgraph's)."""

    model_config = ConfigDict(extra="ignore")

    thread_id: str | None = None
    checkpoint_ns: str = ""
    checkpoint_id: str | None = None
    checkpoint_map: dict[str, Any] | None = None


class StateAtCheckpoint(BaseModel):
    """Body of ``POST /threads/{id}/state/checkpoint``."""

    checkpoint: CheckpointRef
    subgraphs: bool = False


class StateUpdate(BaseModel):
    """Body of ``POST /threads/{id}/state``."""

    model_config = ConfigDict(extra="ignore")

    values: dict[str, Any] | list[Any] | None = None
    as_node: str | None = None
    checkpoint_id: str | None = None
    checkpoint: CheckpointRef | None = None


class HistoryQuery(BaseModel):
    """Body of ``POST /threads/{id}/history``."""

    model_config = ConfigDict(extra="ignore")

    limit: Annotated[int, Field(ge=1, le=1000)] = 10
    before: str | CheckpointRef | None = None
    metadata: dict[str, Any] | None = None
    checkpoint: CheckpointRef | None = None


@router.get("/state", summary="The thread's current state")
async def get_state(
    thread_id: str, services: Svc, tenant: Tenant, subgraphs: bool = False
) -> dict[str, Any]:
    """Values, next nodes, tasks (with interrupts) and the checkpoint it was read from."""
    thread = await get_thread_or_404(services, thread_id, tenant)
    return await thread_state(services, thread, subgraphs=subgraphs)


@router.get("/state/{checkpoint_id}", summary="The thread's state at a checkpoint")
async def get_state_at(
    thread_id: str, checkpoint_id: str, services: Svc, tenant: Tenant, subgraphs: bool = False
) -> dict[str, Any]:
    """The state as it was at ``checkpoint_id``."""
    thread = await get_thread_or_404(services, thread_id, tenant)
    checkpoint = {"checkpoint_id": checkpoint_id}
    return await thread_state(services, thread, checkpoint, subgraphs=subgraphs)


@router.post("/state/checkpoint", summary="The thread's state at a checkpoint (by body)")
async def post_state_at(
    thread_id: str, body: StateAtCheckpoint, services: Svc, tenant: Tenant
) -> dict[str, Any]:
    """The state at a checkpoint given as an object (subgraph namespaces included)."""
    thread = await get_thread_or_404(services, thread_id, tenant)
    checkpoint = body.checkpoint.model_dump(exclude_none=True)
    return await thread_state(services, thread, checkpoint, subgraphs=body.subgraphs)


@router.post("/state", summary="Update the thread's state")
async def update_state(
    thread_id: str, body: StateUpdate, services: Svc, tenant: Tenant
) -> dict[str, Any]:
    """Write ``values`` as if node ``as_node`` had returned them; returns the new checkpoint.

    A thread with no run yet gets its graph from its metadata (``graph_id`` or
    ``assistant_id``, as the SDK's ``threads.create(graph_id=...)`` sets it).
    """
    thread = await get_thread_or_404(services, thread_id, tenant)
    version = await thread_graph_version(services, thread) or await _first_graph(services, thread)
    graph = await compiled_graph(services, version, tenant)
    checkpoint = body.checkpoint.model_dump(exclude_none=True) if body.checkpoint else {}
    if body.checkpoint_id:
        checkpoint["checkpoint_id"] = body.checkpoint_id
    try:
        config = await graph.aupdate_state(
            thread_config(thread["thread_id"], checkpoint), body.values, as_node=body.as_node
        )
    except (InvalidUpdateError, ValueError, KeyError) as exc:
        # LangGraph's words for an unknown node, an ambiguous update or a bad value.
        raise Problem(422, f"cannot update the state: {exc}", kind="state-update-invalid") from None
    return {"checkpoint": snapshot_to_api(await graph.aget_state(config), tenant)["checkpoint"]}


@router.post("/history", summary="The thread's past states")
async def history(
    thread_id: str, body: HistoryQuery, services: Svc, tenant: Tenant
) -> list[dict[str, Any]]:
    """States newest first, optionally before a checkpoint and filtered by metadata."""
    thread = await get_thread_or_404(services, thread_id, tenant)
    version = await thread_graph_version(services, thread)
    if version is None:
        return []
    graph = await compiled_graph(services, version, tenant)
    before = body.before
    if isinstance(before, str):
        before = CheckpointRef(checkpoint_id=before)
    checkpoint = body.checkpoint.model_dump(exclude_none=True) if body.checkpoint else None
    stored = thread["thread_id"]
    return [
        snapshot_to_api(snapshot, tenant)
        async for snapshot in graph.aget_state_history(
            thread_config(stored, checkpoint),
            filter=body.metadata,
            before=thread_config(stored, before.model_dump(exclude_none=True)) if before else None,
            limit=body.limit,
        )
    ]


async def _first_graph(services: Services, thread: dict[str, Any]) -> GraphVersion:
    """The graph a run-less thread's metadata names, recorded as the thread's graph."""
    metadata = thread.get("metadata") or {}
    named = metadata.get("assistant_id") or metadata.get("graph_id")
    if not isinstance(named, str):
        raise Problem(
            409,
            f"thread {client_thread_id(thread['tenant_id'], thread['thread_id'])} has no graph "
            "yet: start a run on it first, "
            "or create it with metadata graph_id",
            kind="thread-without-graph",
            title="Thread has no graph",
        )
    version = await resolve_assistant(services, named, thread["tenant_id"])
    await claim_thread(
        services.pool,
        thread["thread_id"],
        graph=version.name,
        version=version.version,
        digest=version.digest,
    )
    return version
