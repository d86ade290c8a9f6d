"""Caps and rate limits of tools, shared in Postgres: the only SQL on their tables.

Tables ``plait_tool_limits`` (a row per tenant and limited key: the rate's
arrival time, a pause) and ``plait_tool_calls`` (calls holding a slot or waiting
for one, with leases), and the function ``plait_tool_take`` (migration 0020).
The waiting, the events and the errors are the gateway's
(:mod:`plait.engine.governance.tool_limits`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from psycopg import AsyncConnection
from psycopg.rows import DictRow

from plait.engine.store.pool import Pool


@dataclass(frozen=True)
class KeyLimit:
    """What one call declares for one key: a cap on calls in flight, a rate, a burst."""

    key: str
    concurrency: int | None = None
    #: The rate as written (``"10/s"``), shown by the API.
    rate: str | None = None
    #: Seconds between calls at the rate (``None``: no rate).
    interval: float | None = None
    burst: int = 1


@dataclass(frozen=True)
class Turn:
    """The answer to a take: granted, or refused with why, on which key and for how long."""

    granted: bool
    #: Seconds until a token or the end of a pause; ``None`` for a slot (no known time).
    wait_seconds: float | None = None
    reason: str | None = None
    key: str | None = None
    #: The limit that held it: slots (``"2"``) or a rate (``"10/s"``).
    held_by: str | None = None
    #: Who set that limit: ``spec`` or ``operator`` (``POST /tool-limits/caps``).
    set_by: str | None = None


@dataclass(frozen=True)
class LimitState:
    """One limited key as it is now: what was declared, what is in flight and waiting."""

    tenant: str
    key: str
    concurrency: int | None
    rate: str | None
    in_flight: int
    waiting: int
    #: The operator's caps on the key (``None``: none).
    cap_concurrency: int | None
    cap_rate: str | None
    paused_until: datetime | None
    paused_reason: str | None
    updated_at: datetime


_TAKE = """
SELECT granted, wait_seconds, reason, blocked, held_by, set_by
FROM plait_tool_take(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
"""
_RENEW = """
UPDATE plait_tool_calls SET lease_until = clock_timestamp() + make_interval(secs => %s)
WHERE id = %s
"""
_RELEASE = "DELETE FROM plait_tool_calls WHERE id = %s"
_PAUSE = """
UPDATE plait_tool_limits
SET paused_until = greatest(paused_until, clock_timestamp() + make_interval(secs => %s)),
    paused_reason = %s
WHERE tenant_id = %s AND key = ANY(%s)
RETURNING paused_until
"""
_CAPS = """
INSERT INTO plait_tool_limits AS l (tenant_id, key, cap_concurrency, cap_rate, cap_interval)
VALUES (%s, %s, %s, %s, %s)
ON CONFLICT (tenant_id, key) DO UPDATE SET
    cap_concurrency = EXCLUDED.cap_concurrency,
    cap_rate = EXCLUDED.cap_rate,
    cap_interval = EXCLUDED.cap_interval
"""
_RESUME = """
UPDATE plait_tool_limits SET paused_until = NULL, paused_reason = NULL
WHERE tenant_id = %s AND key = %s
RETURNING key
"""
# Expired rows are counted out here; the next take of their key deletes them.
_STATES = """
SELECT l.tenant_id, l.key, l.concurrency, l.rate, l.cap_concurrency, l.cap_rate, l.updated_at,
       CASE WHEN l.paused_until > clock_timestamp() THEN l.paused_until END AS paused_until,
       CASE WHEN l.paused_until > clock_timestamp() THEN l.paused_reason END AS paused_reason,
       count(c.id) FILTER (WHERE c.state = 'running') AS in_flight,
       count(c.id) FILTER (WHERE c.state = 'waiting') AS waiting
FROM plait_tool_limits l
LEFT JOIN plait_tool_calls c
  ON c.tenant_id = l.tenant_id AND c.key = l.key AND c.lease_until > clock_timestamp()
WHERE %s::text IS NULL OR l.tenant_id = %s
GROUP BY l.tenant_id, l.key
ORDER BY l.tenant_id, l.key
"""


async def take(
    pool: Pool,
    call_id: str,
    tenant: str,
    limits: Sequence[KeyLimit],
    *,
    tool: str,
    run_id: str | None,
    node: str | None,
    lease_seconds: float,
) -> Turn:
    """Take a slot and a token under every key of ``limits`` at once, or record the call waiting.

    ``limits`` must be sorted by key (rows are locked in that order). A slot is
    held under the lease until :func:`release`; :func:`renew` extends it.
    """
    params = (
        call_id,
        tenant,
        [limit.key for limit in limits],
        [limit.concurrency for limit in limits],
        [limit.rate for limit in limits],
        [limit.interval for limit in limits],
        [limit.burst for limit in limits],
        tool,
        run_id,
        node,
        lease_seconds,
    )
    async with pool.connection() as conn:
        cursor = await conn.execute(_TAKE, params)
        row = await cursor.fetchone()
    assert row is not None  # the function always answers one row
    return Turn(
        row["granted"],
        row["wait_seconds"],
        row["reason"],
        row["blocked"],
        row["held_by"],
        row["set_by"],
    )


async def renew(pool: Pool, call_id: str, lease_seconds: float) -> None:
    """Extend the lease of the call's slots (or of its waiting row)."""
    async with pool.connection() as conn:
        await conn.execute(_RENEW, (lease_seconds, call_id))


async def release(pool: Pool, call_id: str) -> None:
    """Free the call's slots (or forget that it waited)."""
    async with pool.connection() as conn:
        await conn.execute(_RELEASE, (call_id,))


async def pause(
    pool: Pool, tenant: str, keys: Sequence[str], seconds: float, reason: str
) -> datetime | None:
    """Pause ``keys`` for ``seconds`` from now (a later pause already set is kept).

    Returns when the pause ends, or ``None`` when no key has a row (never taken).
    """
    async with pool.connection() as conn:
        cursor = await conn.execute(_PAUSE, (seconds, reason[:500], tenant, list(keys)))
        rows = await cursor.fetchall()
    return max((row["paused_until"] for row in rows), default=None)


async def set_caps(
    pool: Pool,
    tenant: str,
    key: str,
    *,
    concurrency: int | None,
    rate: str | None,
    interval: float | None,
) -> None:
    """Set the operator's caps on ``key`` (``None`` removes one); they tighten what calls declare.

    A key no call has used yet gets its row now, so a cap can come first.
    """
    async with pool.connection() as conn:
        await conn.execute(_CAPS, (tenant, key, concurrency, rate, interval))


async def resume(pool: Pool, tenant: str, key: str) -> bool:
    """End ``key``'s pause now; False when the tenant has no such key."""
    async with pool.connection() as conn:
        cursor = await conn.execute(_RESUME, (tenant, key))
        return await cursor.fetchone() is not None


async def limit_states(conn: AsyncConnection[DictRow], tenant: str | None) -> list[LimitState]:
    """Every limited key (of ``tenant``, or of all tenants when ``None``) as it is now."""
    cursor = await conn.execute(_STATES, (tenant, tenant))
    return [
        LimitState(
            tenant=row["tenant_id"],
            key=row["key"],
            concurrency=row["concurrency"],
            rate=row["rate"],
            in_flight=row["in_flight"],
            waiting=row["waiting"],
            cap_concurrency=row["cap_concurrency"],
            cap_rate=row["cap_rate"],
            paused_until=row["paused_until"],
            paused_reason=row["paused_reason"],
            updated_at=row["updated_at"],
        )
        for row in await cursor.fetchall()
    ]
