"""Apply the SQL migrations of Plait and of LangGraph's checkpointer and store, once each."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from importlib import resources

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.store.postgres.aio import AsyncPostgresStore
from psycopg import AsyncConnection
from psycopg.rows import DictRow

from plait.engine.store.pool import Pool

# Any fixed 64-bit number works; this one is "plait" in ASCII. Every process
# migrating the same database takes this lock, so only one applies migrations.
_LOCK_KEY = 0x706C616974
_FILE_NAME = re.compile(r"^(\d{4})_(\w+)\.sql$")
_LOCK_POLL_SECONDS = 0.05


@dataclass(frozen=True)
class Migration:
    """One SQL file of ``engine/store/migrations``."""

    version: int
    name: str
    sql: str


def migrations() -> list[Migration]:
    """Plait's migrations in the order they apply (by their ``NNNN_`` prefix)."""
    found: list[Migration] = []
    for entry in resources.files("plait.engine.store").joinpath("migrations").iterdir():
        match = _FILE_NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda migration: migration.version)
    versions = [migration.version for migration in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"two migrations share a number in engine/store/migrations: {versions}")
    return found


async def migrate(pool: Pool, *, lock_timeout: float = 120.0) -> list[int]:
    """Bring the database up to date; return the versions applied now.

    Each migration runs in its own transaction together with its row in
    ``plait_schema_migrations``. A session advisory lock makes concurrent
    callers (two ``plait`` processes starting at once) wait for each other;
    the checkpointer's and the long-term store's ``setup()`` run under the same
    lock because their own migrations are not safe to run concurrently.
    """
    applied_now: list[int] = []
    async with pool.connection() as conn:
        try:
            async with asyncio.timeout(lock_timeout):
                await _acquire_lock(conn)
        except TimeoutError:
            raise TimeoutError(
                f"another process held Plait's migration lock for over {lock_timeout:.0f} s"
            ) from None
        try:
            await conn.execute(
                """
                CREATE TABLE IF NOT EXISTS plait_schema_migrations (
                    version    integer PRIMARY KEY,
                    name       text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """
            )
            cursor = await conn.execute("SELECT version FROM plait_schema_migrations")
            done = {row["version"] for row in await cursor.fetchall()}
            for migration in migrations():
                if migration.version in done:
                    continue
                async with conn.transaction():
                    # prepare=False: a file holds several statements, which only
                    # the simple query protocol accepts.
                    await conn.execute(migration.sql.encode(), prepare=False)
                    await conn.execute(
                        "INSERT INTO plait_schema_migrations (version, name) VALUES (%s, %s)",
                        (migration.version, migration.name),
                    )
                applied_now.append(migration.version)
            # On this connection, so that migrating needs only one pool slot.
            await AsyncPostgresSaver(conn).setup()
            # LangGraph's long-term store (engine/store/items.py) keeps its own versions too.
            await AsyncPostgresStore(conn).setup()
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied_now


async def _acquire_lock(conn: AsyncConnection[DictRow]) -> None:
    """Take the migration lock, polling instead of blocking.

    A blocking ``pg_advisory_lock`` would sit in a statement holding a snapshot,
    and the checkpointer's ``CREATE INDEX CONCURRENTLY`` in the lock holder waits
    for every older snapshot to end: a deadlock. Between polls a waiter holds none.
    """
    while True:
        cursor = await conn.execute("SELECT pg_try_advisory_lock(%s) AS locked", (_LOCK_KEY,))
        row = await cursor.fetchone()
        if row is not None and row["locked"]:
            return
        await asyncio.sleep(_LOCK_POLL_SECONDS)
