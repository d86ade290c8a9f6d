"""Upgrading a thread to another version of its graph through a declared migration.

Under the thread's lock (the one every run change takes): the thread must be
parked or idle, the target version must declare a migration from the thread's
version; the latest checkpoint is moved to the new version
(:func:`plait.engine.run.upgrades.upgrade_checkpoint`), the thread's version and
digest, its pending approvals and an audit entry (who, from, to) change in the
same transaction (docs/decisions.md 95).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from plait.engine.run import UpgradeRefused, upgrade_checkpoint
from plait.engine.spec import find_migration, migration_hint
from plait.engine.store import AuditRecord, Pool, new_checkpointer, record_in
from plait.server.approvals.records import move_pending_in
from plait.server.graphs.versions import get_version
from plait.server.queue import timers
from plait.server.queue.runs import active_runs_in
from plait.server.queue.threads import (
    ThreadNotFound,
    client_thread_id,
    locked_thread_in,
    set_thread_version_in,
)


class CompiledGraphs(Protocol):
    """Compiled graph versions (``plait.server.workers.execution.GraphCache``)."""

    async def get(self, name: str, version: str, tenant: str = ...) -> Any: ...


class GraphVersionMissing(LookupError):
    """The version to upgrade to is not one the tenant sees (HTTP 404)."""


async def upgrade_thread(
    pool: Pool,
    graphs: CompiledGraphs,
    thread_id: str,
    version: str,
    *,
    tenant: str,
    actor: str,
    specs_dir: Path | None = None,
) -> dict[str, Any]:
    """Move the tenant's thread (stored id ``thread_id``) to ``version`` of its graph.

    Returns what changed: ``{thread_id, graph, from, to, migration, checkpoint_id,
    written, interrupts, approvals}`` (``interrupts``: old id -> new id). Raises
    :class:`ThreadNotFound`, :class:`GraphVersionMissing`, or
    :class:`~plait.engine.run.UpgradeRefused` (its ``kind`` says why: ``thread-busy``,
    ``not-started``, ``migration-missing``, ``no-node``, ``node-moved``,
    ``in-subgraph``, ``partly-resumed``, ``migration-failed``).
    """
    shown = client_thread_id(tenant, thread_id)
    async with pool.connection() as conn, conn.transaction():
        thread = await locked_thread_in(conn, thread_id, tenant)
        if thread is None:
            raise ThreadNotFound(thread_id, tenant)
        graph, old_version = thread["graph"], thread["version"]
        if graph is None:
            raise UpgradeRefused(
                f"thread {shown} has not run yet: its first run picks the version "
                "(name the version in the run's assistant_id)",
                "not-started",
            )
        active = await active_runs_in(conn, thread_id)
        if active:
            raise UpgradeRefused(
                f"thread {shown} is busy with run {', '.join(active)}; a thread is upgraded "
                "while it is parked on an interrupt or idle: wait for the run, or cancel it",
                "thread-busy",
            )
        target = await get_version(pool, graph, version, specs_dir=specs_dir, tenant=tenant)
        if target is None:
            raise GraphVersionMissing(f"graph {graph}@{version} not found")
        if version == old_version and target.digest == thread["digest"]:
            return _report(shown, graph, old_version, version, None, None, {}, 0)
        migration = find_migration(target.loaded.spec, old_version)
        if migration is None:
            raise UpgradeRefused(
                f"{graph}@{version} declares no migration from {old_version}, the version "
                f"thread {shown} runs: {migration_hint(graph, old_version, version)}",
                "migration-missing",
            )
        old = await graphs.get(graph, old_version, tenant)
        new = await graphs.get(graph, version, tenant)
        saver = new_checkpointer(pool)
        detail = {"from": old_version, "to": version, "migration": migration.from_}
        upgraded = await upgrade_checkpoint(
            saver,
            old.bind(saver),
            new.bind(saver),
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}},
            old_spec=old.loaded.spec,
            new_spec=new.loaded.spec,
            migration=migration,
            # As a run's checkpoints say which spec wrote them (engine/run/context.py).
            metadata={
                "plait_graph": graph,
                "plait_version": version,
                "plait_digest": target.digest,
                "plait_upgrade": {**detail, "by": actor},
            },
        )
        await set_thread_version_in(conn, thread_id, version, target.digest)
        approvals = await move_pending_in(conn, thread_id, version, upgraded.interrupts)
        # An approval's expiry (and a wait's time) fires on the moved interrupt.
        await timers.move_pending_in(conn, thread_id, version, upgraded.interrupts)
        await record_in(
            conn,
            AuditRecord(
                kind="upgrade",
                thread_id=thread_id,
                run_id=None,
                node="",
                step=None,
                tool=None,
                actor=actor,
                detail={**detail, "graph": graph, "checkpoint_id": upgraded.checkpoint_id},
                tenant=tenant,
            ),
        )
    return _report(
        shown,
        graph,
        old_version,
        version,
        migration.from_,
        upgraded.checkpoint_id,
        {old_id: new_id for old_id, (new_id, _node) in upgraded.interrupts.items()},
        approvals,
        written=list(upgraded.written),
    )


def _report(
    thread_id: str,
    graph: str,
    old: str,
    new: str,
    migration: str | None,
    checkpoint_id: str | None,
    interrupts: dict[str, str],
    approvals: int,
    *,
    written: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "thread_id": thread_id,
        "graph": graph,
        "from": old,
        "to": new,
        "migration": migration,
        "checkpoint_id": checkpoint_id,
        "written": written or [],
        "interrupts": interrupts,
        "approvals": approvals,
    }
