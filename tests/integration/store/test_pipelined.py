"""A pipelined transaction: one round trip when it reads nothing before its commit, and
all or nothing of it kept, whatever ends it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import psycopg
import pytest
from psycopg._pipeline_base import BasePipeline
from psycopg.pq import TransactionStatus

from plait.engine.store import Pool, pipelined_transaction

pytestmark = pytest.mark.postgres


@pytest.fixture
async def table(pool: Pool) -> AsyncIterator[str]:
    name = f"pipelined_{uuid.uuid4().hex[:8]}"
    async with pool.connection() as conn:
        await conn.execute(f"CREATE TABLE {name} (v text PRIMARY KEY)")
    yield name
    async with pool.connection() as conn:
        await conn.execute(f"DROP TABLE {name}")


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many times psycopg synced with the server (a Sync message: a round trip)."""
    counted = [0]
    enqueue = BasePipeline._enqueue_sync

    def counting(self: BasePipeline) -> None:
        counted[0] += 1
        enqueue(self)

    monkeypatch.setattr(BasePipeline, "_enqueue_sync", counting)
    yield counted


async def _values(pool: Pool, table: str) -> list[str]:
    async with pool.connection() as conn:
        cursor = await conn.execute(f"SELECT v FROM {table} ORDER BY v")
        return [row["v"] for row in await cursor.fetchall()]


async def test_a_block_that_reads_nothing_commits_in_one_round_trip(
    pool: Pool, table: str, syncs: list[int]
) -> None:
    async with pool.connection() as conn:
        async with pipelined_transaction(conn):
            await conn.execute(f"INSERT INTO {table} VALUES ('a')")
            cursor = await conn.execute(f"INSERT INTO {table} VALUES ('b') RETURNING v")
        assert syncs[0] == 1
        # Its results came back with the commit.
        assert await cursor.fetchone() == {"v": "b"}
        assert conn.pgconn.transaction_status == TransactionStatus.IDLE
    assert syncs[0] == 1
    assert await _values(pool, table) == ["a", "b"]

    # psycopg's own transaction in a pipeline: three more.
    syncs[0] = 0
    async with pool.connection() as conn, conn.pipeline(), conn.transaction():
        await conn.execute(f"INSERT INTO {table} VALUES ('c')")
    assert syncs[0] == 4


async def test_a_read_inside_the_block_sees_its_own_writes_without_ending_it(
    pool: Pool, table: str, syncs: list[int]
) -> None:
    async with pool.connection() as conn:
        with pytest.raises(RuntimeError):
            async with pipelined_transaction(conn):
                await conn.execute(f"INSERT INTO {table} VALUES ('a')")
                cursor = await conn.execute(f"SELECT count(*) AS n FROM {table}")
                assert await cursor.fetchone() == {"n": 1}
                raise RuntimeError("changed my mind")
        assert conn.pgconn.transaction_status == TransactionStatus.IDLE
    # The read was no commit: the block's error took the insert back too.
    assert await _values(pool, table) == []


async def test_a_refused_statement_keeps_nothing_of_the_transaction(pool: Pool, table: str) -> None:
    async with pool.connection() as conn:
        await conn.execute(f"INSERT INTO {table} VALUES ('taken')")
        with pytest.raises(psycopg.errors.UniqueViolation):
            async with pipelined_transaction(conn):
                await conn.execute(f"INSERT INTO {table} VALUES ('new')")
                await conn.execute(f"INSERT INTO {table} VALUES ('taken')")
                await conn.execute(f"INSERT INTO {table} VALUES ('after')")
        # Rolled back here, not left to the pool (which would warn of it).
        assert conn.pgconn.transaction_status == TransactionStatus.IDLE
        cursor = await conn.execute("SELECT 1 AS ok")
        assert await cursor.fetchone() == {"ok": 1}
    assert await _values(pool, table) == ["taken"]


async def test_a_transaction_inside_the_block_is_a_savepoint(pool: Pool, table: str) -> None:
    async with pool.connection() as conn, pipelined_transaction(conn):
        await conn.execute(f"INSERT INTO {table} VALUES ('kept')")
        with pytest.raises(psycopg.errors.UniqueViolation):
            async with conn.transaction():
                await conn.execute(f"INSERT INTO {table} VALUES ('kept')")
        await conn.execute(f"INSERT INTO {table} VALUES ('also kept')")
    assert await _values(pool, table) == ["also kept", "kept"]


async def test_a_notification_is_heard_only_once_the_block_has_committed(
    pool: Pool, database_url: str
) -> None:
    channel = f"pipelined_{uuid.uuid4().hex[:8]}"
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as listener:
        await listener.execute(f"LISTEN {channel}")
        async with pool.connection() as conn:
            with pytest.raises(RuntimeError):
                async with pipelined_transaction(conn):
                    await conn.execute("SELECT pg_notify(%s, 'rolled back')", (channel,))
                    await (await conn.execute("SELECT 1")).fetchone()
                    raise RuntimeError("no")
            async with pipelined_transaction(conn):
                await conn.execute("SELECT pg_notify(%s, 'committed')", (channel,))
        # Notifications arrive in commit order: a rolled-back one heard would come first.
        heard = [n.payload async for n in listener.notifies(timeout=10, stop_after=1)]
    assert heard == ["committed"]
