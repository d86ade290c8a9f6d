"""The audit trail in Postgres (table ``plait_audit``, migration 0004)."""

from __future__ import annotations

from psycopg.types.json import Jsonb

from engine.runtime.audit import AuditRecord
from engine.store.pool import Pool

_INSERT = """
INSERT INTO plait_audit
    (kind, tenant, thread_id, run_id, node, step, tool, actor, detail, created_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
"""


class PostgresAuditStore:
    """An :class:`engine.runtime.audit.AuditStore` on a connection pool."""

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
