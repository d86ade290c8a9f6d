"""Postgres storage: connection URL (or the embedded server), pools, checkpoints, migrations.

Also the engine's tables: tool results, audit, MCP tasks, long-term items.
"""

from plait.engine.store.audit import PostgresAuditStore
from plait.engine.store.checkpointer import new_checkpointer
from plait.engine.store.database import (
    DATABASE_URL_ENV,
    EMBEDDED_LOGGER,
    database_url,
    release_embedded,
)
from plait.engine.store.items import TenantStore, open_item_store
from plait.engine.store.mcp_tasks import TaskRecord
from plait.engine.store.mcp_tasks import set_status as set_task_status
from plait.engine.store.migrate import migrate, migrations
from plait.engine.store.pool import Pool, open_pool
from plait.engine.store.tool_results import (
    PostgresToolResultStore,
    RecordedResult,
    begin_intent,
    park_intent,
    read_record,
    write_record,
)

__all__ = [
    "DATABASE_URL_ENV",
    "EMBEDDED_LOGGER",
    "Pool",
    "PostgresAuditStore",
    "PostgresToolResultStore",
    "RecordedResult",
    "TaskRecord",
    "TenantStore",
    "begin_intent",
    "database_url",
    "migrate",
    "migrations",
    "new_checkpointer",
    "open_item_store",
    "open_pool",
    "park_intent",
    "read_record",
    "release_embedded",
    "set_task_status",
    "write_record",
]
