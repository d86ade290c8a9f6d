"""API threads (table ``plait_threads``): create, read, search, update, delete, status.

A thread made through the API exists before its first run; the first run
records its graph (see ``plait.server.queue.runs.create_run``). The dicts returned
are the Agent Server ``Thread`` shape without ``values`` / ``interrupts``,
which come from the thread's checkpoints (the API fills them).

Thread ids are the tenant's own: a thread of a tenant other than ``default``
is stored (and checkpointed, and its tool calls keyed) under
``<tenant>/<id>`` (:func:`stored_thread_id`), so two tenants may pick the same
id and another tenant's id answers exactly as a free one. Clients never see
the prefix (:func:`client_thread_id`); a client's id cannot hold a ``/``
(nor could a URL path segment carry it). Below the API, every function here
and in ``plait.server.queue.runs`` takes and returns stored ids.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Literal

from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from plait.engine.store import Pool, new_checkpointer
from plait.server.auth.store import DEFAULT_TENANT

ThreadStatus = Literal["idle", "busy", "interrupted", "error"]
THREAD_STATUSES: tuple[str, ...] = ("idle", "busy", "interrupted", "error")

_COLUMNS = "thread_id, graph, version, digest, metadata, status, created_at, updated_at, tenant_id"
_SORTABLE = ("thread_id", "status", "created_at", "updated_at")


#: Between a tenant and its own id in a stored thread id.
SCOPE_SEPARATOR = "/"


def stored_thread_id(tenant: str, thread_id: str) -> str:
    """The id ``tenant``'s thread ``thread_id`` is stored under (``default``'s: its own)."""
    if tenant == DEFAULT_TENANT:
        return thread_id
    return f"{tenant}{SCOPE_SEPARATOR}{thread_id}"


def client_thread_id(tenant: str, stored: str) -> str:
    """The id ``tenant``'s client knows the stored thread ``stored`` by."""
    prefix = f"{tenant}{SCOPE_SEPARATOR}"
    if tenant != DEFAULT_TENANT and stored.startswith(prefix):
        return stored[len(prefix) :]
    return stored


def check_client_thread_id(thread_id: str) -> str:
    """``thread_id`` if a client may choose it; raises ``ValueError`` for one with a ``/``."""
    if SCOPE_SEPARATOR in thread_id:
        raise ValueError(f"a thread id cannot contain {SCOPE_SEPARATOR!r}: {thread_id!r}")
    return thread_id


class ThreadNotFound(LookupError):
    """No such thread (HTTP 404); ``thread_id`` is the stored id, the message the client's."""

    def __init__(self, thread_id: str, tenant: str = DEFAULT_TENANT) -> None:
        self.thread_id = thread_id
        super().__init__(f"thread {client_thread_id(tenant, thread_id)} not found")


class ThreadExists(Exception):
    """A thread with that id exists and ``if_exists`` is ``raise`` (HTTP 409)."""

    def __init__(self, thread_id: str, tenant: str = DEFAULT_TENANT) -> None:
        self.thread_id = thread_id
        super().__init__(f"thread {client_thread_id(tenant, thread_id)} already exists")


async def create_thread(
    pool: Pool,
    *,
    thread_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    if_exists: str = "raise",
    tenant: str = DEFAULT_TENANT,
) -> dict[str, Any]:
    """Create a thread of ``tenant`` under the stored id ``thread_id`` (a new uuid, scoped
    to the tenant, when None).

    ``if_exists``: ``raise`` (:class:`ThreadExists`) or ``do_nothing``
    (return the existing thread unchanged), as the Agent Server does. Stored
    ids are scoped by tenant (:func:`stored_thread_id`), so the one thread a
    tenant can collide with is its own.
    """
    if if_exists not in ("raise", "do_nothing"):
        raise ValueError(f"unknown if_exists {if_exists!r}; use 'raise' or 'do_nothing'")
    tid = thread_id or stored_thread_id(tenant, str(uuid.uuid4()))
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"""
            INSERT INTO plait_threads (thread_id, metadata, tenant_id) VALUES (%s, %s, %s)
            ON CONFLICT (thread_id) DO NOTHING
            RETURNING {_COLUMNS}
            """,
            (tid, Jsonb(dict(metadata or {})), tenant),
        )
        row = await cursor.fetchone()
    if row is not None:
        return _thread(row)
    if if_exists == "raise":
        raise ThreadExists(tid, tenant)
    existing = await get_thread(pool, tid, tenant)
    if existing is None:  # deleted in between
        raise ThreadExists(tid, tenant)
    return existing


async def get_thread(
    pool: Pool, thread_id: str, tenant: str = DEFAULT_TENANT
) -> dict[str, Any] | None:
    """The thread, or ``None`` (also when it is another tenant's)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_threads WHERE thread_id = %s AND tenant_id = %s",
            (thread_id, tenant),
        )
        row = await cursor.fetchone()
    return None if row is None else _thread(row)


async def thread_exists(pool: Pool, thread_id: str) -> bool:
    """Whether the thread (of any tenant: ``thread_id`` is the stored id) still exists."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT 1 FROM plait_threads WHERE thread_id = %s", (thread_id,)
        )
        return await cursor.fetchone() is not None


async def search_threads(
    pool: Pool,
    *,
    metadata: Mapping[str, Any] | None = None,
    status: str | None = None,
    ids: list[str] | None = None,
    limit: int = 10,
    offset: int = 0,
    sort_by: str = "created_at",
    sort_order: str = "desc",
    tenant: str = DEFAULT_TENANT,
) -> list[dict[str, Any]]:
    """Threads whose metadata contains ``metadata`` (JSON containment), by status and ids."""
    if sort_by not in _SORTABLE:
        raise ValueError(f"cannot sort threads by {sort_by!r}; use one of {', '.join(_SORTABLE)}")
    order = "ASC" if sort_order.lower() == "asc" else "DESC"
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"""
            SELECT {_COLUMNS} FROM plait_threads
            WHERE tenant_id = %s AND metadata @> %s
              AND (%s::text IS NULL OR status = %s)
              AND (%s::text[] IS NULL OR thread_id = ANY(%s))
            ORDER BY {sort_by} {order}, thread_id
            LIMIT %s OFFSET %s
            """.encode(),
            (tenant, Jsonb(dict(metadata or {})), status, status, ids, ids, limit, offset),
        )
        rows = await cursor.fetchall()
    return [_thread(row) for row in rows]


async def update_thread(
    pool: Pool, thread_id: str, *, metadata: Mapping[str, Any], tenant: str = DEFAULT_TENANT
) -> dict[str, Any]:
    """Merge ``metadata`` into the thread's (top-level keys replace).

    Raises :class:`ThreadNotFound`.
    """
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"""
            UPDATE plait_threads SET metadata = metadata || %s, updated_at = now()
            WHERE thread_id = %s AND tenant_id = %s
            RETURNING {_COLUMNS}
            """,
            (Jsonb(dict(metadata)), thread_id, tenant),
        )
        row = await cursor.fetchone()
    if row is None:
        raise ThreadNotFound(thread_id, tenant)
    return _thread(row)


async def delete_thread(pool: Pool, thread_id: str, tenant: str = DEFAULT_TENANT) -> None:
    """Delete the thread with its runs, journals, approvals and checkpoints.

    Raises :class:`ThreadNotFound`. Checkpoints go through the saver's own
    ``adelete_thread`` (its tables are its business), after the rows.
    """
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "DELETE FROM plait_threads WHERE thread_id = %s AND tenant_id = %s RETURNING thread_id",
            (thread_id, tenant),
        )
        deleted = await cursor.fetchone()
    if deleted is None:
        raise ThreadNotFound(thread_id, tenant)
    await new_checkpointer(pool).adelete_thread(thread_id)


async def locked_thread_in(
    conn: AsyncConnection[DictRow], thread_id: str, tenant: str
) -> dict[str, Any] | None:
    """The tenant's thread, locked as every run change locks it (in ``conn``'s transaction),
    or ``None``."""
    cursor = await conn.execute(
        f"SELECT {_COLUMNS} FROM plait_threads WHERE thread_id = %s AND tenant_id = %s "
        "FOR NO KEY UPDATE",
        (thread_id, tenant),
    )
    row = await cursor.fetchone()
    return None if row is None else _thread(row)


async def set_thread_version_in(
    conn: AsyncConnection[DictRow], thread_id: str, version: str, digest: str
) -> dict[str, Any]:
    """Record that the (locked) thread now runs ``version`` of its graph (an upgrade)."""
    cursor = await conn.execute(
        f"""
        UPDATE plait_threads SET version = %s, digest = %s, updated_at = now()
        WHERE thread_id = %s RETURNING {_COLUMNS}
        """,
        (version, digest, thread_id),
    )
    row = await cursor.fetchone()
    if row is None:
        raise ThreadNotFound(thread_id)
    return _thread(row)


async def set_thread_status(pool: Pool, thread_id: str, status: str) -> None:
    """Set the thread's status (``idle``, ``busy``, ``interrupted``, ``error``)."""
    if status not in THREAD_STATUSES:
        raise ValueError(f"unknown thread status {status!r}")
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "UPDATE plait_threads SET status = %s, updated_at = now() WHERE thread_id = %s "
            "RETURNING thread_id",
            (status, thread_id),
        )
        if await cursor.fetchone() is None:
            raise ThreadNotFound(thread_id)


def _thread(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "thread_id": row["thread_id"],
        "created_at": row["created_at"].isoformat(),
        "updated_at": row["updated_at"].isoformat(),
        "metadata": row["metadata"],
        "status": row["status"],
        # Plait's additions: the graph the thread runs (None before its first run).
        "graph": row["graph"],
        "version": row["version"],
        "digest": row["digest"],
        "tenant_id": row["tenant_id"],
    }
