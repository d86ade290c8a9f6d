"""Recorded tool results and intents in Postgres.

Tables ``plait_tool_results`` (migration 0003) and ``plait_tool_intents``
(migration 0013, the calls of ``idempotent: false`` tools that began).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg.types.json import Json

from plait.engine.store.pool import Pool

_INSERT = """
INSERT INTO plait_tool_results
    (key, thread_id, run_id, node, path, tool, args, result, created_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (key) DO NOTHING
"""
_SELECT = "SELECT result, created_at FROM plait_tool_results WHERE key = %s"
_READ_THREAD = """
SELECT node, path, tool, args, result FROM plait_tool_results
WHERE thread_id = %s ORDER BY created_at, key
"""
_INTENT = "SELECT began_at, attempts, parked, answered_run FROM plait_tool_intents WHERE key = %s"
_FIRST_ATTEMPT = """
INSERT INTO plait_tool_intents (key, thread_id, run_id, node, tool, args, attempts, answered_run)
VALUES (%s, %s, %s, %s, %s, %s, 1, %s)
ON CONFLICT (key) DO NOTHING
"""
_NEXT_ATTEMPT = """
UPDATE plait_tool_intents
SET attempts = attempts + 1, began_at = now(), run_id = %s, answered_run = %s, parked = false
WHERE key = %s AND attempts = %s
"""


@dataclass(frozen=True)
class RecordedResult:
    """A tool call's recorded outcome: its JSON-like return value.

    Only successes are recorded (see ``plait.engine.tools.gateway`` for why).
    """

    value: Any
    recorded_at: datetime

    @classmethod
    def now(cls, value: Any) -> RecordedResult:
        """A record of ``value`` made at the current time."""
        return cls(value=value, recorded_at=datetime.now(UTC))


@dataclass(frozen=True)
class Intent:
    """That a non-idempotent call began: when its last attempt began, and how many did.

    ``answered_run`` is the run whose in-doubt answer let the last attempt
    begin (a re-sent command of that run must not be used twice); ``parked``
    says the last attempt parked its run (an MCP task) rather than dying.
    """

    began_at: datetime
    attempts: int
    parked: bool = False
    answered_run: str | None = None


class PostgresToolResultStore:
    """A :class:`plait.engine.tools.idempotency.ToolResultStore` on a connection pool.

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
        path: str | None = None,
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
                path=path,
            )

    async def intent(self, key: str) -> Intent | None:
        """The intent under ``key``, if a non-idempotent call began there."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(_INTENT, (key,))
            row = await cursor.fetchone()
        if row is None:
            return None
        return Intent(row["began_at"], row["attempts"], row["parked"], row["answered_run"])

    async def begin(
        self,
        key: str,
        attempt: int,
        *,
        answered_run: str | None,
        thread_id: str,
        run_id: str | None,
        node: str,
        tool: str,
        args: Mapping[str, Any],
    ) -> bool:
        """Record, committed, that attempt ``attempt`` began over ``attempt - 1``; False if taken.

        The pool's connections are in autocommit: the row is durable when this returns.
        """
        async with self.pool.connection() as conn:
            return await begin_intent(
                conn,
                key,
                attempt,
                answered_run=answered_run,
                thread_id=thread_id,
                run_id=run_id,
                node=node,
                tool=tool,
                args=args,
            )

    async def park(self, key: str) -> None:
        """Mark the last attempt under ``key`` as parked (its run waits; it did not die)."""
        async with self.pool.connection() as conn:
            await park_intent(conn, key)


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
    path: str | None = None,
) -> RecordedResult:
    """Record ``record`` on ``conn`` unless ``key`` has one already; return the stored record.

    ``ON CONFLICT DO NOTHING`` then a read: the first writer's row is the
    answer for every writer, and the read also returns the value as JSON
    gives it back, exactly what a later :meth:`PostgresToolResultStore.get` returns.
    ``path`` is where ``node`` ran among subgraphs (``engine/observability/node_path.py``).
    """
    await conn.execute(
        _INSERT,
        (
            key,
            thread_id,
            run_id,
            node,
            path,
            tool,
            Json(dict(args)),
            Json(record.value),
            record.recorded_at,
        ),
    )
    cursor = await conn.execute(_SELECT, (key,))
    row = await cursor.fetchone()
    if row is None:
        raise RuntimeError(f"tool result {key} vanished right after it was recorded")
    return RecordedResult(row["result"], row["created_at"])


async def begin_intent(
    conn: AsyncConnection[DictRow],
    key: str,
    attempt: int,
    *,
    answered_run: str | None,
    thread_id: str,
    run_id: str | None,
    node: str,
    tool: str,
    args: Mapping[str, Any],
) -> bool:
    """:meth:`PostgresToolResultStore.begin` on ``conn`` (in the caller's transaction, if any)."""
    if attempt == 1:
        cursor = await conn.execute(
            _FIRST_ATTEMPT, (key, thread_id, run_id, node, tool, Json(dict(args)), answered_run)
        )
    else:
        cursor = await conn.execute(_NEXT_ATTEMPT, (run_id, answered_run, key, attempt - 1))
    return cursor.rowcount == 1


async def park_intent(conn: AsyncConnection[DictRow], key: str) -> None:
    """:meth:`PostgresToolResultStore.park` on ``conn``."""
    await conn.execute("UPDATE plait_tool_intents SET parked = true WHERE key = %s", (key,))


async def delete_thread_results(pool: Pool, thread_id: str) -> int:
    """Delete the records (and intents) of ``thread_id``; return how many records there were."""
    async with pool.connection() as conn:
        await conn.execute("DELETE FROM plait_tool_intents WHERE thread_id = %s", (thread_id,))
        cursor = await conn.execute(
            "DELETE FROM plait_tool_results WHERE thread_id = %s", (thread_id,)
        )
        return cursor.rowcount


async def read_thread_results(pool: Pool, thread_id: str) -> list[dict[str, Any]]:
    """``{node, path, tool, args, result}`` of every tool result recorded on ``thread_id``,
    oldest first (``plait record``); ``path`` is ``None`` in records made before it was kept."""
    async with pool.connection() as conn:
        cursor = await conn.execute(_READ_THREAD, (thread_id,))
        return [dict(row) for row in await cursor.fetchall()]
