"""A thread's state from the checkpointer, in the Agent Server's ThreadState shape.

The API reads state the way LangGraph does (``aget_state``,
``aget_state_history``, ``aupdate_state``) on the thread's own graph
version, compiled from the registry table; a thread with no runs yet has
no graph and an empty state. Checkpoints are stored under the thread's
stored id; what is returned names the thread by the client's id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import Interrupt, StateSnapshot

from plait.engine.spec import to_plain
from plait.engine.store import new_checkpointer
from plait.server.api.deps import Services
from plait.server.graphs.versions import GraphVersion, get_version
from plait.server.http.problems import Problem
from plait.server.queue.threads import client_thread_id


async def compiled_graph(services: Services, graph: GraphVersion, tenant: str) -> Any:
    """``graph`` compiled as ``tenant`` sees it (cached per version), bound to a fresh
    checkpointer."""
    compiled = await services.graphs.get(graph.name, graph.version, tenant)
    return compiled.bind(new_checkpointer(services.pool))


async def thread_graph_version(
    services: Services, thread: Mapping[str, Any]
) -> GraphVersion | None:
    """The graph version a thread runs on, ``None`` before its first run."""
    name, version = thread.get("graph"), thread.get("version")
    if not name or not version:
        return None
    found = await get_version(
        services.pool,
        name,
        version,
        specs_dir=services.settings.specs_dir,
        tenant=thread["tenant_id"],
    )
    if found is None:
        raise Problem(
            409,
            f"thread {_shown(thread)} runs {name}@{version}, which is not in the registry",
            kind="graph-missing",
            title="Graph version missing",
        )
    return found


def thread_config(thread_id: str, checkpoint: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The LangGraph config that addresses a thread, or one of its checkpoints."""
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
    for key in ("checkpoint_ns", "checkpoint_id", "checkpoint_map"):
        if checkpoint and checkpoint.get(key) is not None:
            configurable[key] = checkpoint[key]
    return {"configurable": configurable}


def empty_state(thread_id: str, tenant: str) -> dict[str, Any]:
    """The state of a thread (stored id ``thread_id``) that has no checkpoint yet."""
    return {
        "values": {},
        "next": [],
        "tasks": [],
        "metadata": {},
        "created_at": None,
        "checkpoint": _checkpoint(thread_config(thread_id), tenant),
        "parent_checkpoint": None,
        "interrupts": [],
    }


def snapshot_to_api(snapshot: StateSnapshot, tenant: str) -> dict[str, Any]:
    """A LangGraph ``StateSnapshot`` of ``tenant``'s thread as the protocol's ThreadState."""
    tasks = []
    for task in snapshot.tasks:
        nested = task.state
        tasks.append(
            {
                "id": task.id,
                "name": task.name,
                "error": _error_text(task.error),
                "interrupts": [interrupt_to_api(item) for item in task.interrupts],
                "checkpoint": _checkpoint(nested, tenant) if isinstance(nested, Mapping) else None,
                "state": snapshot_to_api(nested, tenant)
                if isinstance(nested, StateSnapshot)
                else None,
                "result": to_plain(task.result),
            }
        )
    return {
        "values": to_plain(snapshot.values),
        "next": list(snapshot.next),
        "tasks": tasks,
        "metadata": to_plain(snapshot.metadata or {}),
        "created_at": snapshot.created_at,
        "checkpoint": _checkpoint(snapshot.config, tenant),
        "parent_checkpoint": _checkpoint(snapshot.parent_config, tenant)
        if snapshot.parent_config
        else None,
        "interrupts": [interrupt_to_api(item) for item in snapshot.interrupts],
    }


def interrupt_to_api(item: Interrupt) -> dict[str, Any]:
    """An interrupt as the protocol sends it: ``{id, value}``."""
    return {"id": item.id, "value": to_plain(item.value)}


def values_with_interrupts(state: Mapping[str, Any]) -> dict[str, Any]:
    """A ThreadState's values, plus ``__interrupt__`` when it waits, as ``/runs/wait`` returns."""
    values = dict(state["values"]) if isinstance(state["values"], Mapping) else {}
    if state["interrupts"]:
        values["__interrupt__"] = state["interrupts"]
    return values


async def thread_state(
    services: Services,
    thread: Mapping[str, Any],
    checkpoint: Mapping[str, Any] | None = None,
    *,
    subgraphs: bool = False,
) -> dict[str, Any]:
    """The thread's current state (or at ``checkpoint``) as ThreadState."""
    graph_version = await thread_graph_version(services, thread)
    tenant = thread["tenant_id"]
    if graph_version is None:
        return empty_state(thread["thread_id"], tenant)
    graph = await compiled_graph(services, graph_version, tenant)
    snapshot = await graph.aget_state(
        thread_config(thread["thread_id"], checkpoint), subgraphs=subgraphs
    )
    if snapshot.created_at is None:
        if checkpoint and checkpoint.get("checkpoint_id"):
            raise Problem(
                404,
                f"thread {_shown(thread)} has no checkpoint {checkpoint['checkpoint_id']}",
                kind="not-found",
                title="Not found",
            )
        return empty_state(thread["thread_id"], tenant)
    return snapshot_to_api(snapshot, tenant)


def _shown(thread: Mapping[str, Any]) -> str:
    """The id the thread's client knows it by."""
    return client_thread_id(thread["tenant_id"], thread["thread_id"])


def _checkpoint(config: Mapping[str, Any], tenant: str) -> dict[str, Any]:
    configurable = config.get("configurable", {})
    stored = configurable.get("thread_id")
    return {
        "thread_id": client_thread_id(tenant, stored) if isinstance(stored, str) else stored,
        "checkpoint_ns": configurable.get("checkpoint_ns", ""),
        "checkpoint_id": configurable.get("checkpoint_id"),
        "checkpoint_map": configurable.get("checkpoint_map"),
    }


def _error_text(error: Any) -> str | None:
    if error is None:
        return None
    if isinstance(error, BaseException):
        return f"{type(error).__name__}: {error}"
    return str(error)
