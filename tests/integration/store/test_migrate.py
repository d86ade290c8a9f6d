"""Migrations on a real, empty PostgreSQL database."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncConnection, sql
from psycopg.rows import DictRow

from plait.engine.store.checkpointer import new_checkpointer
from plait.engine.store.migrator import migrate, migrations
from plait.engine.store.pool import open_pool

pytestmark = pytest.mark.postgres


async def _tables(url: str) -> set[str]:
    async with await open_pool(url) as pool, pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        return {row["table_name"] for row in await cursor.fetchall()}


async def _migrated_before(conn: AsyncConnection[DictRow], version: int) -> None:
    """The database as a Plait whose newest migration came before ``version`` left it."""
    earlier = [m for m in migrations() if m.version < version]
    for migration in earlier:
        await conn.execute(migration.sql.encode(), prepare=False)
    await conn.execute(
        "CREATE TABLE plait_schema_migrations (version integer PRIMARY KEY, "
        "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    for migration in earlier:
        await conn.execute(
            "INSERT INTO plait_schema_migrations (version, name) VALUES (%s, %s)",
            (migration.version, migration.name),
        )


async def test_migrate_creates_tables_and_records_versions(empty_database_url: str) -> None:
    async with await open_pool(empty_database_url) as pool:
        applied = await migrate(pool)
        async with pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT version, name FROM plait_schema_migrations ORDER BY version"
            )
            recorded = [(row["version"], row["name"]) for row in await cursor.fetchall()]

    expected = [(m.version, m.name) for m in migrations()]
    assert applied == [version for version, _ in expected]
    assert recorded == expected
    tables = await _tables(empty_database_url)
    assert {"plait_threads", "plait_runs", "checkpoints", "checkpoint_writes"} <= tables


async def test_migrate_is_idempotent(empty_database_url: str) -> None:
    async with await open_pool(empty_database_url) as pool:
        first = await migrate(pool)
        second = await migrate(pool)
    assert first
    assert second == []


async def test_concurrent_migrations_apply_each_file_once(empty_database_url: str) -> None:
    # Separate pools stand for separate processes starting at the same moment.
    pools = [await open_pool(empty_database_url, max_size=2) for _ in range(4)]
    try:
        results = await asyncio.gather(*(migrate(pool) for pool in pools))
    finally:
        await asyncio.gather(*(pool.close() for pool in pools))

    applied = sorted(version for result in results for version in result)
    assert applied == [m.version for m in migrations()]


def test_migration_files_are_numbered_in_order() -> None:
    versions = [m.version for m in migrations()]
    assert versions == sorted(versions)
    assert versions[0] == 1


async def test_0010_moves_other_tenants_threads_under_their_tenant(
    empty_database_url: str,
) -> None:
    """Rows written before 0010 keep working: each tenant's thread ids become its own."""
    async with await open_pool(empty_database_url) as pool:
        async with pool.connection() as conn:
            await _migrated_before(conn, 10)
            await AsyncPostgresSaver(conn).setup()
            await conn.execute("INSERT INTO plait_tenants (tenant_id) VALUES ('acme')")
            for thread, tenant in (("t-1", "acme"), ("t-2", "default")):
                await conn.execute(
                    "INSERT INTO plait_threads (thread_id, tenant_id) VALUES (%s, %s)",
                    (thread, tenant),
                )
                await conn.execute(
                    "INSERT INTO plait_runs (run_id, thread_id, graph, version, digest, status, "
                    "tenant_id) VALUES (%s, %s, 'g', '1.0.0', 'd', 'interrupted', %s)",
                    (f"run-{thread}", thread, tenant),
                )
                await conn.execute(
                    "INSERT INTO plait_approvals (approval_id, thread_id, run_id, graph, version, "
                    "interrupt_id, tenant_id) VALUES (%s, %s, %s, 'g', '1.0.0', 'i', %s)",
                    (f"ap-{thread}", thread, f"run-{thread}", tenant),
                )
                await conn.execute(
                    "INSERT INTO plait_tool_results (key, thread_id, run_id, node, tool, args, "
                    "result) VALUES (%s, %s, 'r', 'n', 'x', '{}', '1')",
                    (f"key-{thread}", thread),
                )
                await conn.execute(
                    "INSERT INTO plait_audit (kind, tenant, thread_id, node, actor) "
                    "VALUES ('tool_call', %s, %s, 'n', 'a')",
                    (tenant, thread),
                )
                await conn.execute(
                    "INSERT INTO plait_mcp_tasks (key, thread_id, node, server_name, server, "
                    "tool, task_id) VALUES (%s, %s, 'n', 's', '{}', 'x', 'task')",
                    (f"task-{thread}", thread),
                )
            saver = new_checkpointer(pool)
            for thread in ("t-1", "t-2"):
                config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
                await saver.aput(config, empty_checkpoint(), {"step": 1}, {})

        assert await migrate(pool) == [m.version for m in migrations() if m.version >= 10]

        async with pool.connection() as conn:
            for table in (
                "plait_threads",
                "plait_runs",
                "plait_approvals",
                "plait_tool_results",
                "plait_audit",
                "plait_mcp_tasks",
                "checkpoints",
            ):
                cursor = await conn.execute(
                    sql.SQL("SELECT thread_id FROM {} ORDER BY thread_id").format(
                        sql.Identifier(table)
                    )
                )
                found = [row["thread_id"] for row in await cursor.fetchall()]
                assert found == ["acme/t-1", "t-2"], table
            cursor = await conn.execute(
                "SELECT tenant_id FROM plait_mcp_tasks WHERE key = 'task-t-1'"
            )
            assert (await cursor.fetchone()) == {"tenant_id": "acme"}
        moved = await new_checkpointer(pool).aget_tuple(
            {"configurable": {"thread_id": "acme/t-1", "checkpoint_ns": ""}}
        )
        assert moved is not None


async def test_0019_gives_every_run_the_state_its_records_imply(empty_database_url: str) -> None:
    """Runs written before 0019 get a state; a thread's parked newest run waits on a person
    or, with an MCP task parked on it, on the tool; CLI-parked runs become `success`."""
    runs = [
        # (thread, thread status, run, status, cancel_action, dead_letter)
        ("approval", "interrupted", "parked", "success", None, None),
        ("tool", "interrupted", "on-task", "success", None, None),
        ("cli", "idle", "cli-parked", "interrupted", None, None),
        ("cli", "idle", "cli-resumed", "success", None, None),
        ("other", "idle", "cancelled", "interrupted", "interrupt", None),
        ("other", "idle", "dead", "error", None, '{"reason": "r"}'),
        ("other", "idle", "broke", "error", None, None),
        ("other", "idle", "slow", "timeout", None, None),
        ("other", "busy", "waits", "pending", None, None),
    ]
    async with await open_pool(empty_database_url) as pool:
        async with pool.connection() as conn:
            await _migrated_before(conn, 19)
            for thread, thread_status, run, status, cancel, dead in runs:
                await conn.execute(
                    "INSERT INTO plait_threads (thread_id, status) VALUES (%s, %s) "
                    "ON CONFLICT DO NOTHING",
                    (thread, thread_status),
                )
                await conn.execute(
                    "INSERT INTO plait_runs (run_id, thread_id, graph, version, digest, status, "
                    "cancel_action, dead_letter) VALUES (%s, %s, 'g', '1.0.0', 'd', %s, %s, %s)",
                    (run, thread, status, cancel, dead),
                )
            await conn.execute(
                "INSERT INTO plait_mcp_tasks (key, thread_id, node, server_name, server, tool, "
                "task_id, parked_run_id) VALUES ('k', 'tool', 'n', 's', '{}', 'x', 't', 'on-task')"
            )

        assert await migrate(pool) == [m.version for m in migrations() if m.version >= 19]

        async with pool.connection() as conn:
            cursor = await conn.execute("SELECT run_id, status, state FROM plait_runs")
            found = {
                row["run_id"]: (row["status"], row["state"]) for row in await cursor.fetchall()
            }
    assert found == {
        "parked": ("success", "waiting_for_person"),
        "on-task": ("success", "waiting_for_tool"),
        "cli-parked": ("success", "succeeded"),
        "cli-resumed": ("success", "succeeded"),
        "cancelled": ("interrupted", "cancelled"),
        "dead": ("error", "dead_lettered"),
        "broke": ("error", "failed"),
        "slow": ("timeout", "timed_out"),
        "waits": ("pending", "queued"),
    }
