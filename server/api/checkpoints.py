"""A thread's state from the checkpointer, in the Agent Server's ThreadState shape.

The API reads state the way LangGraph does (``aget_state``,
``aget_state_history``, ``aupdate_state``) on the thread's own graph
version, compiled from the registry table; a thread with no runs yet has
no graph and an empty state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import Interrupt, StateSnapshot

from engine.spec.expressions import to_plain
from engine.store.checkpointer import new_checkpointer
from server.api.deps import Services
from server.problems import Problem
from server.registry import GraphVersion, get_version


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
            f"thread {thread['thread_id']} runs {name}@{version}, which is not in the registry",
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


def empty_state(thread_id: str) -> dict[str, Any]:
    """The state of a thread that has no checkpoint yet."""
    return {
        "values": {},
        "next": [],
        "tasks": [],
        "metadata": {},
        "created_at": None,
        "checkpoint": _checkpoint(thread_config(thread_id)),
        "parent_checkpoint": None,
        "interrupts": [],
    }


def snapshot_to_api(snapshot: StateSnapshot) -> dict[str, Any]:
    """A LangGraph ``StateSnapshot`` as the protocol's ThreadState."""
    tasks = []
    for task in snapshot.tasks:
        nested = task.state
        tasks.append(
            {
                "id": task.id,
                "name": task.name,
                "error": _error_text(task.error),
                "interrupts": [interrupt_to_api(item) for item in task.interrupts],
                "checkpoint": _checkpoint(nested) if isinstance(nested, Mapping) else None,
                "state": snapshot_to_api(nested) if isinstance(nested, StateSnapshot) else None,
                "result": to_plain(task.result),
            }
        )
    return {
        "values": to_plain(snapshot.values),
        "next": list(snapshot.next),
        "tasks": tasks,
        "metadata": to_plain(snapshot.metadata or {}),
        "created_at": snapshot.created_at,
        "checkpoint": _checkpoint(snapshot.config),
        "parent_checkpoint": _checkpoint(snapshot.parent_config)
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
    if graph_version is None:
        return empty_state(thread["thread_id"])
    graph = await compiled_graph(services, graph_version, thread["tenant_id"])
    snapshot = await graph.aget_state(
        thread_config(thread["thread_id"], checkpoint), subgraphs=subgraphs
    )
    if snapshot.created_at is None:
        if checkpoint and checkpoint.get("checkpoint_id"):
            raise Problem(
                404,
                f"thread {thread['thread_id']} has no checkpoint {checkpoint['checkpoint_id']}",
                kind="not-found",
                title="Not found",
            )
        return empty_state(thread["thread_id"])
    return snapshot_to_api(snapshot)


def _checkpoint(config: Mapping[str, Any]) -> dict[str, Any]:
    configurable = config.get("configurable", {})
    return {
        "thread_id": configurable.get("thread_id"),
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
