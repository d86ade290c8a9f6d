"""Crons in SQL: store, search, change and delete a tenant's schedules; claim due ones.

Every query names the tenant: another tenant's cron id answers as a free id.
:func:`due` locks the crons it returns (``FOR UPDATE SKIP LOCKED``) in the
caller's transaction, so two workers never fire the same cron at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg.types.json import Json, Jsonb

from plait.engine.store import Pool
from plait.server.queue.threads import client_thread_id

_COLUMNS = (
    "cron_id::text AS cron_id, tenant_id, assistant_id, thread_id, schedule, timezone, end_time, "
    "enabled, on_run_completed, payload, kwargs, metadata, next_run_at, created_at, updated_at"
)
SortBy = Literal[
    "cron_id", "assistant_id", "thread_id", "next_run_date", "end_time", "created_at", "updated_at"
]
_SORT_COLUMNS = {"next_run_date": "next_run_at"}


@dataclass(frozen=True)
class Cron:
    """A row of ``plait_crons``."""

    cron_id: str
    tenant: str
    assistant_id: str
    thread_id: str | None
    schedule: str
    timezone: str
    end_time: datetime | None
    enabled: bool
    on_run_completed: str | None
    payload: dict[str, Any]
    kwargs: dict[str, Any]
    metadata: dict[str, Any]
    next_run_at: datetime | None
    created_at: datetime
    updated_at: datetime

    def to_api(self) -> dict[str, Any]:
        """The Agent Server's ``Cron`` (JSON-ready), with the client's thread id."""
        return {
            "cron_id": self.cron_id,
            "assistant_id": self.assistant_id,
            "thread_id": client_thread_id(self.tenant, self.thread_id) if self.thread_id else None,
            "on_run_completed": self.on_run_completed,
            "end_time": self.end_time.isoformat() if self.end_time else None,
            "schedule": self.schedule,
            "timezone": self.timezone,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "payload": self.payload,
            "user_id": None,
            "next_run_date": self.next_run_at.isoformat() if self.next_run_at else None,
            "metadata": self.metadata,
            "enabled": self.enabled,
        }


@dataclass(frozen=True)
class CronFields:
    """What a client sets on a cron (all of it on create, any of it on update)."""

    assistant_id: str
    schedule: str
    timezone: str
    end_time: datetime | None
    enabled: bool
    on_run_completed: str | None
    payload: dict[str, Any]
    kwargs: dict[str, Any]
    metadata: dict[str, Any]
    next_run_at: datetime | None


async def insert(pool: Pool, tenant: str, thread_id: str | None, fields: CronFields) -> Cron:
    """Store a new cron of ``tenant``; its runs go to ``thread_id`` (stored id) or new threads."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"""
            INSERT INTO plait_crons (tenant_id, thread_id, assistant_id, schedule, timezone,
                end_time, enabled, on_run_completed, payload, kwargs, metadata, next_run_at)
            VALUES (%(tenant)s, %(thread)s, %(assistant_id)s, %(schedule)s, %(timezone)s,
                %(end_time)s, %(enabled)s, %(on_run_completed)s, %(payload)s, %(kwargs)s,
                %(metadata)s, %(next_run_at)s)
            RETURNING {_COLUMNS}
            """,
            {"tenant": tenant, "thread": thread_id, **_params(fields)},
        )
        return _cron(await cursor.fetchone())


async def get(pool: Pool, cron_id: str, tenant: str) -> Cron | None:
    """The tenant's cron, or ``None``."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_crons WHERE cron_id::text = %s AND tenant_id = %s",
            (cron_id, tenant),
        )
        row = await cursor.fetchone()
    return None if row is None else _cron(row)


async def update(pool: Pool, cron_id: str, tenant: str, fields: CronFields) -> Cron | None:
    """Replace what a client sets on the tenant's cron; ``None`` when it has none of that id."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"""
            UPDATE plait_crons
            SET assistant_id = %(assistant_id)s, schedule = %(schedule)s,
                timezone = %(timezone)s, end_time = %(end_time)s, enabled = %(enabled)s,
                on_run_completed = %(on_run_completed)s, payload = %(payload)s,
                kwargs = %(kwargs)s, metadata = %(metadata)s, next_run_at = %(next_run_at)s,
                updated_at = now()
            WHERE cron_id::text = %(cron_id)s AND tenant_id = %(tenant)s
            RETURNING {_COLUMNS}
            """,
            {"cron_id": cron_id, "tenant": tenant, **_params(fields)},
        )
        row = await cursor.fetchone()
    return None if row is None else _cron(row)


async def delete(pool: Pool, cron_id: str, tenant: str) -> bool:
    """Delete the tenant's cron; whether there was one."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "DELETE FROM plait_crons WHERE cron_id::text = %s AND tenant_id = %s RETURNING cron_id",
            (cron_id, tenant),
        )
        return await cursor.fetchone() is not None


async def search(
    pool: Pool,
    tenant: str,
    *,
    assistant_id: str | None = None,
    thread_id: str | None = None,
    enabled: bool | None = None,
    metadata: Mapping[str, Any] | None = None,
    limit: int = 10,
    offset: int = 0,
    sort_by: SortBy = "created_at",
    sort_order: Literal["asc", "desc"] = "desc",
) -> list[Cron]:
    """The tenant's crons matching every filter given (``thread_id`` is a stored id)."""
    column = _SORT_COLUMNS.get(sort_by, sort_by)
    direction = "ASC" if sort_order == "asc" else "DESC"
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_crons WHERE {_FILTER} "
            f"ORDER BY {column} {direction} NULLS LAST, cron_id LIMIT %(limit)s OFFSET %(offset)s",
            {
                **_filters(tenant, assistant_id, thread_id, enabled, metadata),
                "limit": limit,
                "offset": offset,
            },
        )
        return [_cron(row) for row in await cursor.fetchall()]


async def count(
    pool: Pool,
    tenant: str,
    *,
    assistant_id: str | None = None,
    thread_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> int:
    """How many of the tenant's crons match every filter given."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT count(*) AS n FROM plait_crons WHERE {_FILTER}",
            _filters(tenant, assistant_id, thread_id, None, metadata),
        )
        row = await cursor.fetchone()
    return int(row["n"]) if row is not None else 0


async def due(conn: AsyncConnection[DictRow], limit: int) -> list[Cron]:
    """Enabled crons whose time has come, locked for this transaction (others skip them)."""
    cursor = await conn.execute(
        f"""
        SELECT {_COLUMNS} FROM plait_crons
        WHERE enabled AND next_run_at <= now()
        ORDER BY next_run_at
        LIMIT %s
        FOR UPDATE SKIP LOCKED
        """,
        (limit,),
    )
    return [_cron(row) for row in await cursor.fetchall()]


async def reschedule(
    conn: AsyncConnection[DictRow], cron_id: str, next_run_at: datetime | None
) -> None:
    """Set when the cron fires next (``None``: never again)."""
    await conn.execute(
        "UPDATE plait_crons SET next_run_at = %s, updated_at = now() WHERE cron_id::text = %s",
        (next_run_at, cron_id),
    )


async def insert_thread(
    conn: AsyncConnection[DictRow], thread_id: str, tenant: str, cron: Cron
) -> None:
    """The new thread of one run of a cron without a thread, marked as the cron's."""
    mark = {"cron_id": cron.cron_id, "on_run_completed": cron.on_run_completed or "delete"}
    await conn.execute(
        "INSERT INTO plait_threads (thread_id, tenant_id, metadata) VALUES (%s, %s, %s)",
        (thread_id, tenant, Jsonb({"plait_cron": mark})),
    )


async def ended_threads(pool: Pool, limit: int) -> list[tuple[str, str]]:
    """``(thread_id, tenant)`` of threads a cron made whose run ended, to delete
    (``on_run_completed: delete``); a thread waiting on a person (``interrupted``) stays."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            """
            SELECT t.thread_id, t.tenant_id FROM plait_threads t
            WHERE (t.metadata -> 'plait_cron' ->> 'on_run_completed') = 'delete'
              AND t.status IN ('idle', 'error')
              AND NOT EXISTS (
                  SELECT FROM plait_runs r
                  WHERE r.thread_id = t.thread_id AND r.status IN ('pending', 'running'))
            ORDER BY t.updated_at
            LIMIT %s
            """,
            (limit,),
        )
        return [(row["thread_id"], row["tenant_id"]) for row in await cursor.fetchall()]


_FILTER = """tenant_id = %(tenant)s
    AND (%(assistant_id)s::text IS NULL OR assistant_id = %(assistant_id)s)
    AND (%(thread_id)s::text IS NULL OR thread_id = %(thread_id)s)
    AND (%(enabled)s::boolean IS NULL OR enabled = %(enabled)s)
    AND metadata @> %(metadata)s"""


def _filters(
    tenant: str,
    assistant_id: str | None,
    thread_id: str | None,
    enabled: bool | None,
    metadata: Mapping[str, Any] | None,
) -> dict[str, Any]:
    return {
        "tenant": tenant,
        "assistant_id": assistant_id,
        "thread_id": thread_id,
        "enabled": enabled,
        "metadata": Jsonb(dict(metadata or {})),
    }


def _params(fields: CronFields) -> dict[str, Any]:
    return {
        "assistant_id": fields.assistant_id,
        "schedule": fields.schedule,
        "timezone": fields.timezone,
        "end_time": fields.end_time,
        "enabled": fields.enabled,
        "on_run_completed": fields.on_run_completed,
        "payload": Json(fields.payload),
        "kwargs": Json(fields.kwargs),
        "metadata": Jsonb(fields.metadata),
        "next_run_at": fields.next_run_at,
    }


def _cron(row: Mapping[str, Any] | None) -> Cron:
    if row is None:
        raise LookupError("the database returned no row")
    return Cron(
        cron_id=row["cron_id"],
        tenant=row["tenant_id"],
        assistant_id=row["assistant_id"],
        thread_id=row["thread_id"],
        schedule=row["schedule"],
        timezone=row["timezone"],
        end_time=row["end_time"],
        enabled=row["enabled"],
        on_run_completed=row["on_run_completed"],
        payload=row["payload"],
        kwargs=row["kwargs"],
        metadata=row["metadata"],
        next_run_at=row["next_run_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )
