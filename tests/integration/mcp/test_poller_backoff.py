"""The MCP task poller backs off a parked task whose server it cannot reach."""

from __future__ import annotations

import socket
import uuid
from pathlib import Path
from typing import Any

import pytest

from plait.engine.spec.models import McpServerDef
from plait.engine.store.mcp_tasks import TaskRecord, record_task
from plait.engine.store.pool import Pool
from plait.engine.tools.mcp.hub import ServerConnection
from plait.server.workers.mcp_task_poller import McpTaskPoller

pytestmark = pytest.mark.postgres


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def parked_on_unreachable_server(pool: Pool) -> str:
    """A parked task row whose HTTP MCP server refuses connections; its key."""
    thread_id, key = str(uuid.uuid4()), uuid.uuid4().hex
    server = ServerConnection(
        "gone",
        McpServerDef(
            transport="http", url=f"http://127.0.0.1:{closed_port()}/mcp", connect_timeout=5
        ),
        Path("."),
    )
    async with pool.connection() as conn:
        await conn.execute("INSERT INTO plait_threads (thread_id) VALUES (%s)", (thread_id,))
    await record_task(
        pool,
        TaskRecord(
            key=key,
            thread_id=thread_id,
            run_id=None,
            node="report",
            server_name="gone",
            server=server.to_json(),
            tool="slow_report",
            task_id="t-1",
            status="working",
        ),
    )
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE plait_mcp_tasks SET interrupt_id = 'i-1', parked_run_id = 'r-1' WHERE key = %s",
            (key,),
        )
    return key


async def backoff_of(pool: Pool, key: str) -> dict[str, Any]:
    """The row's failed polls in a row and how long until its next poll."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT poll_errors, next_poll_at - now() AS wait FROM plait_mcp_tasks WHERE key = %s",
            (key,),
        )
        row = await cursor.fetchone()
    assert row is not None
    return dict(row)


async def test_a_failing_poll_waits_longer_each_time(pool: Pool) -> None:
    key = await parked_on_unreachable_server(pool)
    poller = McpTaskPoller(pool)

    assert await poller.poll_once() == 0
    first = await backoff_of(pool, key)
    assert first["poll_errors"] == 1 and 0 < first["wait"].total_seconds() <= 2

    # Until its time has come the row is not polled again (no connect attempt).
    assert await poller.poll_once() == 0
    assert (await backoff_of(pool, key))["poll_errors"] == 1

    async with pool.connection() as conn:
        await conn.execute("UPDATE plait_mcp_tasks SET next_poll_at = now() WHERE key = %s", (key,))
    assert await poller.poll_once() == 0
    second = await backoff_of(pool, key)
    assert second["poll_errors"] == 2 and 2 < second["wait"].total_seconds() <= 4
