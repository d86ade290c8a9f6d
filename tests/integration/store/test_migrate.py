"""Migrations on a real, empty PostgreSQL database."""

from __future__ import annotations

import asyncio

import pytest

from engine.store.migrate import migrate, migrations
from engine.store.pool import open_pool

pytestmark = pytest.mark.postgres


async def _tables(url: str) -> set[str]:
    async with await open_pool(url) as pool, pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        return {row["table_name"] for row in await cursor.fetchall()}


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
