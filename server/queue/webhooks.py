"""The webhook outbox in SQL: write a delivery with a run's end, claim due ones, settle them.

A delivery is written in the transaction that records its run's end, so a run
that ended owes exactly one delivery and a run that did not owes none. Senders
claim due deliveries under a lease (``FOR UPDATE SKIP LOCKED``: one sender per
row); a sender that dies mid-call leaves the lease to expire, and the row is
claimed again with the same ``delivery_id``: delivery is at least once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg.types.json import Json

from plait.engine.spec import to_plain
from plait.engine.store import Pool


class EndedRun(Protocol):
    """What a delivery is written from: a run as it ended (``plait.server.queue.runs.Run``)."""

    @property
    def run_id(self) -> str: ...
    @property
    def tenant(self) -> str: ...
    @property
    def kwargs(self) -> dict[str, Any]: ...
    @property
    def error(self) -> str | None: ...

    def to_api(self) -> dict[str, Any]:
        """The run as the Agent Server API shows it."""
        ...


@dataclass(frozen=True)
class Delivery:
    """One call a sender holds: where to, what to send, and which attempt this is."""

    delivery_id: str
    run_id: str
    url: str
    payload: dict[str, Any]
    attempt: int


async def enqueue(conn: AsyncConnection[DictRow], run: EndedRun, values: Any) -> None:
    """Owe ``run``'s ``webhook`` a call with the run as it ended and its final ``values``.

    Call in the transaction that records the end; the body is fixed here, so a
    run deleted later is still reported as it ended.
    """
    url = run.kwargs.get("webhook")
    if not url:
        return
    payload = {**run.to_api(), "error": run.error, "values": to_plain(values)}
    await conn.execute(
        "INSERT INTO plait_webhook_deliveries (run_id, tenant_id, url, payload) "
        "VALUES (%s, %s, %s, %s)",
        (run.run_id, run.tenant, url, Json(payload)),
    )


async def claim(pool: Pool, owner: str, limit: int, lease_seconds: float) -> list[Delivery]:
    """Take up to ``limit`` due deliveries under a lease of ``lease_seconds``."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            """
            UPDATE plait_webhook_deliveries d
            SET lease_owner = %(owner)s, attempts = d.attempts + 1,
                lease_expires_at = now() + make_interval(secs => %(lease)s)
            WHERE d.delivery_id IN (
                SELECT delivery_id FROM plait_webhook_deliveries
                WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now()
                  AND (lease_expires_at IS NULL OR lease_expires_at < now())
                ORDER BY next_attempt_at
                LIMIT %(limit)s
                FOR UPDATE SKIP LOCKED
            )
            RETURNING d.delivery_id, d.run_id, d.url, d.payload, d.attempts
            """,
            {"owner": owner, "lease": lease_seconds, "limit": limit},
        )
        rows = await cursor.fetchall()
    return [_delivery(row) for row in rows]


async def delivered(pool: Pool, delivery: Delivery, owner: str) -> bool:
    """Record that the receiver took ``delivery``; False when ``owner`` no longer held it."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            """
            UPDATE plait_webhook_deliveries
            SET delivered_at = now(), lease_owner = NULL, lease_expires_at = NULL, last_error = NULL
            WHERE delivery_id = %s AND lease_owner = %s AND delivered_at IS NULL
            RETURNING delivery_id
            """,
            (delivery.delivery_id, owner),
        )
        return await cursor.fetchone() is not None


async def failed(
    pool: Pool, delivery: Delivery, owner: str, error: str, retry_in: timedelta | None
) -> None:
    """Record a failed attempt: due again after ``retry_in``, or given up (``None``)."""
    retry_at = datetime.now(UTC) + retry_in if retry_in is not None else None
    async with pool.connection() as conn:
        await conn.execute(
            """
            UPDATE plait_webhook_deliveries
            SET lease_owner = NULL, lease_expires_at = NULL, last_error = %(error)s,
                next_attempt_at = COALESCE(%(retry_at)s, next_attempt_at),
                failed_at = CASE WHEN %(retry_at)s::timestamptz IS NULL THEN now() END
            WHERE delivery_id = %(id)s AND lease_owner = %(owner)s AND delivered_at IS NULL
            """,
            {"error": error, "retry_at": retry_at, "id": delivery.delivery_id, "owner": owner},
        )


def _delivery(row: Mapping[str, Any]) -> Delivery:
    return Delivery(
        delivery_id=str(row["delivery_id"]),
        run_id=row["run_id"],
        url=row["url"],
        payload=row["payload"],
        attempt=row["attempts"],
    )
