"""Postgres storage: connection URL (or the embedded server), pools, checkpoints, migrations.

Also the engine's tables: tool results, audit, MCP tasks, long-term items, tool limits.

The surface loads on first use (``plait.engine.surfaces``), except the
database URL's names: the checkpointer brings LangGraph and the pool psycopg,
which a command that only reads a setting (``plait --help``) must not pay for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.engine.store.database import (
    DATABASE_URL_ENV,
    EMBEDDED_LOGGER,
    database_url,
    release_embedded,
)
from plait.engine.surfaces import on_first_use

if TYPE_CHECKING:
    from plait.engine.store.audit import AuditRecord, PostgresAuditStore, read_run_audit, record_in
    from plait.engine.store.checkpointer import ReadAhead, StepSaver, new_checkpointer
    from plait.engine.store.items import TenantStore, open_item_store
    from plait.engine.store.mcp_tasks import TaskRecord
    from plait.engine.store.mcp_tasks import set_status as set_task_status
    from plait.engine.store.migrator import migrate, migrations
    from plait.engine.store.pipelined import pipelined_transaction
    from plait.engine.store.pool import Pool, dumps_json, open_pool
    from plait.engine.store.tool_limits import LimitState, limit_states
    from plait.engine.store.tool_limits import pause as pause_tool
    from plait.engine.store.tool_limits import resume as resume_tool
    from plait.engine.store.tool_limits import set_caps as cap_tool
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
    "AuditRecord",
    "LimitState",
    "Pool",
    "PostgresAuditStore",
    "PostgresToolResultStore",
    "ReadAhead",
    "RecordedResult",
    "StepSaver",
    "TaskRecord",
    "TenantStore",
    "begin_intent",
    "cap_tool",
    "database_url",
    "dumps_json",
    "limit_states",
    "migrate",
    "migrations",
    "new_checkpointer",
    "open_item_store",
    "open_pool",
    "park_intent",
    "pause_tool",
    "pipelined_transaction",
    "read_record",
    "read_run_audit",
    "record_in",
    "release_embedded",
    "resume_tool",
    "set_task_status",
    "write_record",
]

if not TYPE_CHECKING:
    __getattr__ = on_first_use(
        __name__,
        {
            "audit": ("AuditRecord", "PostgresAuditStore", "read_run_audit", "record_in"),
            "checkpointer": ("ReadAhead", "StepSaver", "new_checkpointer"),
            "items": ("TenantStore", "open_item_store"),
            "mcp_tasks": {"TaskRecord": "TaskRecord", "set_task_status": "set_status"},
            "migrator": ("migrate", "migrations"),
            "pipelined": ("pipelined_transaction",),
            "pool": ("Pool", "dumps_json", "open_pool"),
            "tool_limits": {
                "LimitState": "LimitState",
                "limit_states": "limit_states",
                "pause_tool": "pause",
                "resume_tool": "resume",
                "cap_tool": "set_caps",
            },
            "tool_results": (
                "PostgresToolResultStore",
                "RecordedResult",
                "begin_intent",
                "park_intent",
                "read_record",
                "write_record",
            ),
        },
    )
