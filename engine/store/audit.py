"""The audit trail in Postgres (table ``plait_audit``, migration 0004)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from psycopg.types.json import Jsonb

from plait.engine.store.pool import Pool

_INSERT = """
INSERT INTO plait_audit
    (kind, tenant, thread_id, run_id, node, step, tool, actor, detail, created_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
"""


AuditKind = Literal[
    "tool_call", "approval", "refusal", "compensation", "model_call", "mcp_untrusted"
]

_READ_RUN = """
SELECT kind, node, step, tool, actor, detail, created_at FROM plait_audit
WHERE run_id = %s AND tenant = %s ORDER BY id
"""

_READ_THREAD_MODEL_CALLS = """
SELECT node, detail FROM plait_audit
WHERE thread_id = %s AND kind = 'model_call' ORDER BY id
"""


@dataclass(frozen=True)
class AuditRecord:
    """One audited event. ``step`` is the LangGraph task namespace of the node step."""

    kind: AuditKind
    thread_id: str | None
    run_id: str | None
    node: str
    step: str | None
    tool: str | None
    actor: str
    detail: dict[str, Any] = field(default_factory=dict)
    tenant: str | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def to_dict(self) -> dict[str, Any]:
        """JSON-like form (``created_at`` as ISO 8601)."""
        data = asdict(self)
        data["created_at"] = self.created_at.isoformat()
        return data


class PostgresAuditStore:
    """An ``plait.engine.governance.audit.AuditStore`` on a connection pool."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def record(self, record: AuditRecord) -> None:
        """Append ``record``."""
        async with self.pool.connection() as conn:
            await conn.execute(
                _INSERT,
                (
                    record.kind,
                    record.tenant,
                    record.thread_id,
                    record.run_id,
                    record.node,
                    record.step,
                    record.tool,
                    record.actor,
                    Jsonb(record.detail),
                    record.created_at,
                ),
            )


async def read_run_audit(pool: Pool, run_id: str, tenant: str) -> list[dict[str, Any]]:
    """A run's audit records in the order they were made, if the run is ``tenant``'s."""
    async with pool.connection() as conn:
        cursor = await conn.execute(_READ_RUN, (run_id, tenant))
        rows = await cursor.fetchall()
    return [{**row, "created_at": row["created_at"].isoformat()} for row in rows]


async def read_thread_model_calls(pool: Pool, thread_id: str) -> list[tuple[str, dict[str, Any]]]:
    """``(node, detail)`` of every audited model call on ``thread_id`` (a stored id), in
    the order they were made (``plait record``)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(_READ_THREAD_MODEL_CALLS, (thread_id,))
        rows = await cursor.fetchall()
    return [(row["node"], row["detail"]) for row in rows]
