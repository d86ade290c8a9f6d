"""MCP tasks of parked tool calls (table ``plait_mcp_tasks``, migrations 0007, 0018).

A tool call that runs as an MCP task is recorded here under its idempotency
key before the run parks: the re-run of the node finds the task instead of
starting another one, and the server's poller (``server/workers/mcp_task_poller.py``) finds
the tasks whose thread waits for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb

from plait.engine.store.pool import Pool

_COLUMNS = (
    "key, thread_id, run_id, node, server_name, server, tool, task_id, status, resume_run_id, "
    "interrupts"
)


@dataclass(frozen=True)
class TaskRecord:
    """One recorded MCP task."""

    key: str
    thread_id: str
    run_id: str | None
    node: str
    server_name: str
    server: dict[str, Any]
    tool: str
    task_id: str
    status: str
    resume_run_id: str | None = None
    #: The interrupts the call raised, in order (see migration 0018).
    interrupts: tuple[dict[str, Any], ...] = ()

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> TaskRecord:
        """The record of a table row."""
        fields = {name: row[name] for name in _COLUMNS.split(", ")}
        return cls(**{**fields, "interrupts": tuple(fields["interrupts"] or ())})


async def record_task(pool: Pool, record: TaskRecord) -> TaskRecord:
    """Record ``record`` unless its key has one; return the stored record (first writer wins)."""
    async with pool.connection() as conn:
        await conn.execute(
            f"INSERT INTO plait_mcp_tasks ({_COLUMNS}) VALUES "
            "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING",
            (
                record.key,
                record.thread_id,
                record.run_id,
                record.node,
                record.server_name,
                Jsonb(record.server),
                record.tool,
                record.task_id,
                record.status,
                record.resume_run_id,
                Jsonb(list(record.interrupts)),
            ),
        )
    found = await get_task(pool, record.key)
    if found is None:
        raise RuntimeError(f"MCP task {record.key} vanished right after it was recorded")
    return found


async def get_task(pool: Pool, key: str) -> TaskRecord | None:
    """The task recorded under ``key``, if any."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_mcp_tasks WHERE key = %s", (key,)
        )
        row = await cursor.fetchone()
    return None if row is None else TaskRecord.of(row)


async def set_status(pool: Pool, key: str, status: str) -> None:
    """Record the task's latest status."""
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE plait_mcp_tasks SET status = %s, updated_at = now() WHERE key = %s",
            (status, key),
        )


async def forget_task(pool: Pool, key: str) -> None:
    """Delete the record of a task that failed, so a retry of its call starts a new one."""
    async with pool.connection() as conn:
        await conn.execute("DELETE FROM plait_mcp_tasks WHERE key = %s", (key,))


async def add_interrupt(pool: Pool, key: str, entry: Mapping[str, Any]) -> None:
    """Record that the task's call raises the interrupt ``entry`` next."""
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE plait_mcp_tasks SET interrupts = interrupts || %s, updated_at = now() "
            "WHERE key = %s",
            (Jsonb([dict(entry)]), key),
        )
