"""Rollouts: which versions of a graph a tenant's new threads start on (``plait_rollouts``).

A rollout belongs to one (tenant, graph name): a stable version, an optional
canary version and the canary's share of new threads in percent (decision
90). A run that names the graph by its bare name on a thread that has no
version yet takes the canary when the thread id hashes below the share, else
the stable version; the queue then pins the thread to it for its life, so
running and parked threads never move. A run that names a version
(``name@version`` or an assistant id) runs that version, rollout or not.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from psycopg import AsyncConnection
from psycopg.rows import DictRow

from plait.engine.store import Pool
from plait.server.graphs import catalog
from plait.server.graphs.versions import GraphVersion, get_version, list_graphs, version_key

#: How a version was chosen for a run: by a rollout's canary share or its stable version.
Role = Literal["canary", "stable"]

_COLUMNS = "tenant_id, graph, stable, canary, share, updated_at"


@dataclass(frozen=True)
class Rollout:
    """One row of ``plait_rollouts``."""

    tenant: str
    graph: str
    stable: str
    canary: str | None
    #: Percent (0-100) of new threads that start on the canary.
    share: int
    updated_at: datetime

    def role(self, version: str) -> Role | None:
        """``canary`` or ``stable`` for a version of this rollout, else ``None``."""
        if version == self.canary:
            return "canary"
        return "stable" if version == self.stable else None

    def pick(self, thread_id: str) -> tuple[str, Role]:
        """The version a new thread starts on, and its role: the same thread always
        gets the same answer, and the canary's part of many threads is ``share``%."""
        if self.canary is not None and canary_bucket(thread_id) < self.share:
            return self.canary, "canary"
        return self.stable, "stable"


def rollout_to_api(graph: str, rollout: Rollout | None) -> dict[str, Any]:
    """A rollout as the API and the CLI show it (``None``: the graph has none)."""
    return {
        "graph": graph,
        "stable": rollout.stable if rollout else None,
        "canary": rollout.canary if rollout else None,
        "share": rollout.share if rollout else 0,
        "updated_at": rollout.updated_at.isoformat() if rollout else None,
    }


class RolloutInvalid(ValueError):
    """A rollout that cannot be set: unknown version, share outside 0-100, canary = stable."""


class RolloutNotFound(LookupError):
    """The tenant has no rollout of that graph (or no graph of that name)."""


class RolloutNoCanary(Exception):
    """Promote or roll back asked of a rollout that has no canary."""


def canary_bucket(thread_id: str) -> int:
    """The thread's bucket, 0-99, from SHA-256 of its (stored) id.

    A hash, not a random draw: a retried first run finds the same version, and
    the share can be checked from the thread ids alone.
    """
    digest = hashlib.sha256(thread_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") % 100


async def get_rollout(pool: Pool, graph: str, tenant: str) -> Rollout | None:
    """The tenant's rollout of ``graph``, or ``None`` (kept until the catalog changes)."""

    async def read() -> Rollout | None:
        async with pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT {_COLUMNS} FROM plait_rollouts WHERE tenant_id = %s AND graph = %s",
                (tenant, graph),
            )
            row = await cursor.fetchone()
        return _rollout(row) if row else None

    return await catalog.cached(pool, ("rollout", tenant, graph), read)


async def tenant_rollouts(pool: Pool, tenant: str) -> dict[str, Rollout]:
    """The tenant's rollouts by graph name (``GET /graphs`` shows them beside the versions)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_rollouts WHERE tenant_id = %s", (tenant,)
        )
        return {row["graph"]: _rollout(row) for row in await cursor.fetchall()}


async def list_rollouts(conn: AsyncConnection[DictRow]) -> list[Rollout]:
    """Every tenant's rollouts, by tenant and graph (for ``/metrics``, on its connection)."""
    cursor = await conn.execute(f"SELECT {_COLUMNS} FROM plait_rollouts ORDER BY tenant_id, graph")
    return [_rollout(row) for row in await cursor.fetchall()]


async def set_rollout(
    pool: Pool,
    graph: str,
    *,
    tenant: str,
    stable: str | None = None,
    canary: str | None = None,
    share: int | None = None,
    specs_dir: Path | None = None,
) -> Rollout:
    """Create or replace the tenant's rollout of ``graph``; threads already pinned stay.

    ``stable`` defaults to the current rollout's stable version, else to the
    newest published version other than ``canary``. A canary needs a share;
    without a canary the rollout only pins the stable version for new threads.
    Raises :class:`RolloutInvalid` with what to change.
    """
    if share is not None and not 0 <= share <= 100:
        raise RolloutInvalid(f"share must be a percentage from 0 to 100, not {share}")
    if canary is None and share:
        raise RolloutInvalid("a share needs a canary version: name it with `canary`")
    if canary is not None and share is None:
        raise RolloutInvalid(
            f"say which share of new threads starts on the canary {canary} (0-100)"
        )
    published = [
        version
        for version in await list_graphs(pool, specs_dir=specs_dir, tenant=tenant)
        if version.name == graph
    ]
    known = [version.version for version in published]
    if not known:
        raise RolloutNotFound(f"no graph named {graph!r} is registered")
    if stable is None:
        current = await get_rollout(pool, graph, tenant)
        others = [v for v in known if v != canary]
        if current is not None:
            stable = current.stable
        elif others:
            stable = max(others, key=version_key)
        else:
            raise RolloutInvalid(f"{graph} has no version other than {canary} to be stable")
    for role, version in (("stable", stable), ("canary", canary)):
        if version is not None and version not in known:
            raise RolloutInvalid(
                f"{graph} has no published version {version!r} for {role} "
                f"(known: {', '.join(known)})"
            )
    if canary == stable:
        raise RolloutInvalid(f"the canary and the stable version are both {stable}; pick another")
    async with catalog.writing(pool) as conn:
        cursor = await conn.execute(
            f"""
            INSERT INTO plait_rollouts (tenant_id, graph, stable, canary, share)
            VALUES (%s, %s, %s, %s, %s)
            ON CONFLICT (tenant_id, graph) DO UPDATE SET
                stable = EXCLUDED.stable, canary = EXCLUDED.canary,
                share = EXCLUDED.share, updated_at = now()
            RETURNING {_COLUMNS}
            """,
            (tenant, graph, stable, canary, share or 0),
        )
        row = await cursor.fetchone()
    assert row is not None  # an upsert returns its row
    return _rollout(row)


async def promote(pool: Pool, graph: str, tenant: str) -> Rollout:
    """The canary becomes the stable version (share 0): every new thread starts on it."""
    return await _end_canary(pool, graph, tenant, "stable = canary,")


async def rollback(pool: Pool, graph: str, tenant: str) -> Rollout:
    """The canary is dropped (share 0): new threads start on the stable version again.

    Threads that started on the canary stay on it (a thread continues only on
    the spec it started with), parked ones included.
    """
    return await _end_canary(pool, graph, tenant, "")


async def delete_rollout(pool: Pool, graph: str, tenant: str) -> bool:
    """Remove the rollout (bare names mean the newest version again); whether there was one."""
    async with catalog.writing(pool) as conn:
        cursor = await conn.execute(
            "DELETE FROM plait_rollouts WHERE tenant_id = %s AND graph = %s", (tenant, graph)
        )
        return cursor.rowcount > 0


async def version_for_new_thread(
    pool: Pool,
    newest: GraphVersion,
    thread_id: str,
    tenant: str,
    *,
    specs_dir: Path | None = None,
) -> tuple[GraphVersion, Role] | None:
    """The version the tenant's rollout of ``newest``'s graph starts ``thread_id`` on;
    ``None`` without a rollout (or when its version was removed from the table by hand).

    The caller has the graph's newest version already (it resolved the name): when the
    rollout picks it (a canary is usually the newest), it is not read again.
    """
    rollout = await get_rollout(pool, newest.name, tenant)
    return await version_of_rollout(pool, rollout, newest, thread_id, tenant, specs_dir=specs_dir)


async def version_of_rollout(
    pool: Pool,
    rollout: Rollout | None,
    newest: GraphVersion,
    thread_id: str,
    tenant: str,
    *,
    specs_dir: Path | None = None,
) -> tuple[GraphVersion, Role] | None:
    """:func:`version_for_new_thread` with the tenant's rollout of ``newest``'s graph read
    already (``None``: it has none), so a caller can read it beside other rows."""
    if rollout is None:
        return None
    version, role = rollout.pick(thread_id)
    if version == newest.version:
        return newest, role
    found = await get_version(pool, newest.name, version, specs_dir=specs_dir, tenant=tenant)
    return (found, role) if found is not None else None


async def _end_canary(pool: Pool, graph: str, tenant: str, stable: str) -> Rollout:
    async with catalog.writing(pool) as conn:
        cursor = await conn.execute(
            f"""
            UPDATE plait_rollouts SET {stable} canary = NULL, share = 0, updated_at = now()
            WHERE tenant_id = %s AND graph = %s AND canary IS NOT NULL
            RETURNING {_COLUMNS}
            """.encode(),
            (tenant, graph),
        )
        row = await cursor.fetchone()
    if row is not None:
        return _rollout(row)
    if await get_rollout(pool, graph, tenant) is None:
        raise RolloutNotFound(f"{graph} has no rollout; start one with a canary version first")
    raise RolloutNoCanary(f"the rollout of {graph} has no canary to promote or roll back")


def _rollout(row: dict[str, Any]) -> Rollout:
    return Rollout(
        tenant=row["tenant_id"],
        graph=row["graph"],
        stable=row["stable"],
        canary=row["canary"],
        share=row["share"],
        updated_at=row["updated_at"],
    )
