"""Recorded tool results in Postgres (table ``plait_tool_results``, migration 0003)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from engine.store.pool import Pool
from engine.tools.idempotency import RecordedResult

_INSERT = """
INSERT INTO plait_tool_results (key, thread_id, run_id, node, tool, args, result, created_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (key) DO NOTHING
"""
_SELECT = "SELECT result, created_at FROM plait_tool_results WHERE key = %s"


class PostgresToolResultStore:
    """A :class:`engine.tools.idempotency.ToolResultStore` on a connection pool.

    Safe to share between concurrent runs: each call takes its own connection.
    """

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def get(self, key: str) -> RecordedResult | None:
        """The record under ``key``, if any."""
        async with self.pool.connection() as conn:
            return await read_record(conn, key)

    async def put(
        self,
        key: str,
        record: RecordedResult,
        *,
        thread_id: str,
        run_id: str | None,
        node: str,
        tool: str,
        args: Mapping[str, Any],
    ) -> RecordedResult:
        """Record ``record`` unless ``key`` has one already; return the stored record."""
        async with self.pool.connection() as conn:
            return await write_record(
                conn,
                key,
                record,
                thread_id=thread_id,
                run_id=run_id,
                node=node,
                tool=tool,
                args=args,
            )


async def read_record(conn: AsyncConnection[DictRow], key: str) -> RecordedResult | None:
    """The record under ``key`` on ``conn`` (inside the caller's transaction, if any)."""
    cursor = await conn.execute(_SELECT, (key,))
    row = await cursor.fetchone()
    return None if row is None else RecordedResult(row["result"], row["created_at"])


async def write_record(
    conn: AsyncConnection[DictRow],
    key: str,
    record: RecordedResult,
    *,
    thread_id: str,
    run_id: str | None,
    node: str,
    tool: str,
    args: Mapping[str, Any],
) -> RecordedResult:
    """Record ``record`` on ``conn`` unless ``key`` has one already; return the stored record.

    ``ON CONFLICT DO NOTHING`` then a read: the first writer's row is the
    answer for every writer, and the read also returns the value as JSON
    gives it back, exactly what a later :meth:`PostgresToolResultStore.get` returns.
    """
    await conn.execute(
        _INSERT,
        (
            key,
            thread_id,
            run_id,
            node,
            tool,
            Jsonb(dict(args)),
            Jsonb(record.value),
            record.recorded_at,
        ),
    )
    cursor = await conn.execute(_SELECT, (key,))
    row = await cursor.fetchone()
    if row is None:
        raise RuntimeError(f"tool result {key} vanished right after it was recorded")
    return RecordedResult(row["result"], row["created_at"])


async def delete_thread_results(pool: Pool, thread_id: str) -> int:
    """Delete the records of ``thread_id`` (with the thread); return how many there were."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "DELETE FROM plait_tool_results WHERE thread_id = %s", (thread_id,)
        )
        return cursor.rowcount
