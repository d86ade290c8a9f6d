"""The audit trail: tool calls, approval decisions and policy refusals, one record each.

Records go to an :class:`AuditStore` carried in
``config["configurable"]["plait_audit"]`` (the same injection as the tool
results store, docs/decisions.md 29): the engine never imports the server,
and a run without a store records nothing. Records are written under
``asyncio.shield`` so a cancelled step cannot lose the record of something
that already happened.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig

from plait.engine.store.audit import AuditKind, AuditRecord

#: Where a run's config carries its :class:`AuditStore` (absent: nothing is recorded).
AUDIT_KEY = "plait_audit"


class AuditStore(Protocol):
    """Where audit records go."""

    async def record(self, record: AuditRecord) -> None:
        """Append ``record``."""
        ...


class InMemoryAuditStore:
    """An :class:`AuditStore` in a list: for tests and runs without a database."""

    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    async def record(self, record: AuditRecord) -> None:
        """Append ``record``."""
        self.records.append(record)


def run_id_of(config: RunnableConfig) -> str | None:
    """The run a step belongs to: ``configurable`` first, else the run's metadata."""
    configurable, metadata = config.get("configurable") or {}, config.get("metadata") or {}
    run_id = configurable.get("run_id") or metadata.get("run_id")
    return str(run_id) if run_id is not None else None


def audit_store(config: RunnableConfig) -> AuditStore | None:
    """The run's store, from ``config["configurable"]["plait_audit"]``."""
    store: AuditStore | None = (config.get("configurable") or {}).get(AUDIT_KEY)
    return store


async def audit(
    config: RunnableConfig,
    kind: AuditKind,
    *,
    node: str,
    tool: str | None,
    actor: str,
    detail: dict[str, Any] | None = None,
) -> None:
    """Record one event of the step ``config`` belongs to; no store, no record."""
    store = audit_store(config)
    if store is None:
        return
    configurable = config.get("configurable") or {}
    metadata = config.get("metadata") or {}
    thread_id = configurable.get("thread_id")
    record = AuditRecord(
        kind=kind,
        thread_id=str(thread_id) if thread_id is not None else None,
        run_id=run_id_of(config),
        node=node,
        step=configurable.get("checkpoint_ns") or None,
        tool=tool,
        actor=actor,
        detail=detail or {},
        tenant=metadata.get("plait_tenant"),
    )
    await asyncio.shield(store.record(record))


async def audit_tool_call(config: RunnableConfig, event: dict[str, Any]) -> None:
    """Record a finished tool call from its ``tool_call`` event (the calling node is the actor)."""
    detail = {k: v for k, v in event.items() if k not in ("plait", "node", "tool")}
    node = str(event["node"])
    await audit(
        config, "tool_call", node=node, tool=event["tool"], actor=f"node:{node}", detail=detail
    )
