"""A server process keeps what it read of the graph versions and rollouts until a change
is announced (decision 115), on real Postgres: another process's change (another pool,
or SQL by hand) is seen once its notification arrives, this process's own at once, and
nothing is kept while the LISTEN connection is down."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import cast

import pytest

from plait.engine.store.pool import Pool, open_pool
from plait.server.graphs import catalog
from plait.server.graphs.rollouts import delete_rollout, get_rollout, set_rollout
from plait.server.graphs.versions import latest, save_version
from plait.server.queue.journal import EVENTS_CHANNEL, JournalListener
from tests.counting_pool import CountingPool
from tests.integration.server.queue.conftest import spec_text, unique

pytestmark = pytest.mark.postgres


@dataclass
class Served:
    """What ``plait serve`` has: a pool, its listener and the cache the listener tells."""

    pool: Pool
    listener: JournalListener
    cache: catalog.CatalogCache


@pytest.fixture
async def other(pool: Pool, database_url: str) -> AsyncIterator[Pool]:
    """A second pool on the (migrated) session database: what another server process or
    the CLI writes with."""
    async with await open_pool(database_url, max_size=2) as opened:
        yield opened


@pytest.fixture
async def served(other: Pool, database_url: str) -> AsyncIterator[Served]:
    """A pool with a catalog cache and a listening journal listener, as ``plait serve`` has."""
    async with await open_pool(database_url, max_size=3) as opened:
        listener = JournalListener(opened)
        cache = catalog.attach(opened)
        listener.watch(catalog.CHANGED, cache.changed)
        await listener.start()
        try:
            yield Served(opened, listener, cache)
        finally:
            await listener.stop()
            catalog.detach(opened)


async def _announced(listener: JournalListener, other: Pool) -> None:
    """Return once every change committed on ``other`` so far was announced to ``listener``:
    PostgreSQL delivers notifications in commit order, so a marker sent after them comes
    after them."""
    marker = unique("marker")
    heard = asyncio.Event()
    listener.watch(marker, lambda listening: heard.set() if listening else None)
    heard.clear()  # watch() tells a new watcher once at once when the listener listens
    async with other.connection() as conn:
        await conn.execute("SELECT pg_notify(%s, %s)", (EVENTS_CHANNEL, marker))
    async with asyncio.timeout(10):
        await heard.wait()


async def test_a_read_is_kept_until_another_process_publishes(served: Served, other: Pool) -> None:
    pool, listener = served.pool, served.listener
    name = unique("kept")
    await save_version(other, spec_text(name, "1.0.0"), file="<test>")
    await _announced(listener, other)
    first = await latest(pool, name)
    assert first is not None and first.version == "1.0.0"
    hits = served.cache.hits
    again = await latest(pool, name)
    assert again == first and served.cache.hits == hits + 1  # no statement sent

    await save_version(other, spec_text(name, "1.1.0"), file="<test>")
    await _announced(listener, other)
    after = await latest(pool, name)
    assert after is not None and after.version == "1.1.0"


async def test_a_change_by_hand_is_announced_too(served: Served, other: Pool) -> None:
    pool, listener = served.pool, served.listener
    name = unique("byhand")
    await save_version(other, spec_text(name, "1.0.0"), file="<test>")
    await save_version(other, spec_text(name, "2.0.0", reply="two"), file="<test>")
    await _announced(listener, other)
    newest = await latest(pool, name)
    assert newest is not None and newest.version == "2.0.0"
    async with other.connection() as conn:  # what an operator might do with psql
        await conn.execute(
            "DELETE FROM plait_graph_versions WHERE name = %s AND version = '2.0.0'", (name,)
        )
    await _announced(listener, other)
    now = await latest(pool, name)
    assert now is not None and now.version == "1.0.0"


@pytest.mark.usefixtures("pool")  # the session database, migrated
async def test_this_process_sees_its_own_change_before_it_is_announced(database_url: str) -> None:
    # A cache no listener tells of changes: as if every notification came late.
    async with await open_pool(database_url, max_size=2) as pool:
        catalog.attach(pool).changed(listening=True)
        try:
            name = unique("own")
            await save_version(pool, spec_text(name, "1.0.0"), file="<test>")
            await save_version(pool, spec_text(name, "1.1.0"), file="<test>")
            assert await get_rollout(pool, name, "default") is None
            await set_rollout(pool, name, tenant="default", stable="1.0.0")
            rollout = await get_rollout(pool, name, "default")
            assert rollout is not None and rollout.stable == "1.0.0"
            assert (newest := await latest(pool, name)) and newest.version == "1.1.0"
            await save_version(pool, spec_text(name, "1.2.0"), file="<test>")
            newest = await latest(pool, name)
            assert newest is not None and newest.version == "1.2.0"
            assert await delete_rollout(pool, name, "default")
            assert await get_rollout(pool, name, "default") is None
        finally:
            catalog.detach(pool)


async def test_another_process_s_rollout_is_seen_once_announced(
    served: Served, other: Pool
) -> None:
    pool, listener = served.pool, served.listener
    name = unique("roll")
    await save_version(other, spec_text(name, "1.0.0"), file="<test>")
    await save_version(other, spec_text(name, "1.1.0"), file="<test>")
    await _announced(listener, other)
    assert await get_rollout(pool, name, "default") is None
    await set_rollout(other, name, tenant="default", canary="1.1.0", share=25)
    await _announced(listener, other)
    rollout = await get_rollout(pool, name, "default")
    assert rollout is not None and (rollout.canary, rollout.share) == ("1.1.0", 25)


async def test_nothing_is_kept_while_the_listener_is_down(served: Served, other: Pool) -> None:
    pool, listener = served.pool, served.listener
    name = unique("down")
    await save_version(other, spec_text(name, "1.0.0"), file="<test>")
    await _announced(listener, other)
    assert (await latest(pool, name)) is not None
    await listener.stop()
    # Unannounced now: a read must go to the database, or it would be stale for good.
    await save_version(other, spec_text(name, "1.1.0"), file="<test>")
    found = await latest(pool, name)
    assert found is not None and found.version == "1.1.0"
    assert served.cache.token() is None
    await listener.start()  # kept again from here, and announced
    assert (await latest(pool, name)) == found
    await save_version(other, spec_text(name, "1.2.0"), file="<test>")
    await _announced(listener, other)
    found = await latest(pool, name)
    assert found is not None and found.version == "1.2.0"


def test_a_read_that_straddles_a_change_is_not_kept() -> None:
    cache = catalog.CatalogCache()
    cache.changed(listening=True)
    token = cache.token()
    cache.forget()  # a change lands while the read is on its way
    cache.put("key", "stale", token)
    assert cache.get("key") is None
    token = cache.token()
    cache.put("key", "fresh", token)
    assert cache.get("key") == ("fresh",)
    cache.changed(listening=False)  # the LISTEN connection is lost
    assert cache.token() is None and cache.get("key") is None
    cache.put("key", "unannounced", cache.token())
    assert cache.get("key") is None


async def test_reads_that_miss_together_share_one_statement(served: Served, other: Pool) -> None:
    # Right after a change every request misses: each sent its own read on a pooled
    # connection, so a burst of runs after a publish could drain the pool.
    name = unique("herd")
    await save_version(other, spec_text(name, "1.0.0"), file="<test>")
    await set_rollout(other, name, tenant="default", stable="1.0.0")
    await _announced(served.listener, other)
    counting = CountingPool(served.pool)
    pool = cast(Pool, counting)
    catalog.attach(pool).changed(listening=True)
    try:
        rollouts = await asyncio.gather(*(get_rollout(pool, name, "default") for _ in range(50)))
        assert {(r.graph, r.stable) for r in rollouts if r is not None} == {(name, "1.0.0")}
        assert len(rollouts) == 50 and None not in rollouts
        assert counting.taken == 1
        again = await get_rollout(pool, name, "default")
        assert again == rollouts[0] and counting.taken == 1  # kept once read
    finally:
        catalog.detach(pool)


async def test_a_shared_read_outlives_the_caller_that_began_it() -> None:
    cache = catalog.CatalogCache()
    cache.changed(listening=True)
    release = asyncio.Event()
    reads = 0

    async def read() -> str:
        nonlocal reads
        reads += 1
        await release.wait()
        return "rows"

    token = cache.token()
    assert token is not None
    first = asyncio.ensure_future(cache.share("key", token, read))
    second = asyncio.ensure_future(cache.share("key", token, read))
    await asyncio.sleep(0)  # both are waiting on the one read
    first.cancel()  # the client of the request that began it went away
    release.set()
    assert await second == "rows" and reads == 1
    assert first.cancelled() and cache.get("key") == ("rows",)


async def test_a_failed_read_fails_its_sharers_and_is_not_kept() -> None:
    cache = catalog.CatalogCache()
    cache.changed(listening=True)
    token = cache.token()
    assert token is not None

    async def broken() -> str:
        await asyncio.sleep(0)
        raise ConnectionError("the database went away")

    results = await asyncio.gather(
        *(cache.share("key", token, broken) for _ in range(3)), return_exceptions=True
    )
    assert [type(r) for r in results] == [ConnectionError] * 3
    assert cache.get("key") is None

    async def fine() -> str:
        return "rows"

    assert await cache.share("key", token, fine) == "rows"  # the next caller reads again
