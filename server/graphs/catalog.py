"""What this process read of the catalog (graph versions, rollouts), kept until it changes.

Every run a client starts by a graph's bare name reads the graph's versions and the
tenant's rollout of it: two statements before the run's insert, for rows that change
when someone publishes a version or moves a rollout. A :class:`CatalogCache` keeps what
was read (decision 115):

- every write to ``plait_graph_versions`` or ``plait_rollouts``, by any process, is
  announced on the run events' channel (a statement trigger, migration 0032), and the
  process's LISTEN connection forgets everything kept when one arrives;
- the process forgets it at once after its own writes (:func:`writing`), so a client
  that saw its write succeed reads it back at once, whatever the notification does;
- nothing is kept while the LISTEN connection is down, and everything kept before is
  forgotten when it is lost and when it is back (a change may have gone unannounced).

A write by another process is therefore seen here once its notification arrives (a
few milliseconds after its commit), as a run's events are. A read that began before a
change and ends after it is not kept (:meth:`CatalogCache.token`). Callers that miss
the same key at once, as every request does right after a change, share one read
(:func:`cached`) instead of each taking a pooled connection for the same rows.

The cache belongs to a pool (one database): :func:`attach` makes one for the server's
pool; without one (the CLI, tests, worker processes) every read goes to the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from typing import TypeVar, cast

from psycopg import AsyncConnection
from psycopg.rows import DictRow

from plait.engine.lru import LruCache
from plait.engine.store import Pool

#: The payload on the run events' channel that announces a change (migration 0032).
CHANGED = "catalog"

T = TypeVar("T")

_CACHES: weakref.WeakKeyDictionary[Pool, CatalogCache] = weakref.WeakKeyDictionary()


class CatalogCache:
    """Catalog reads by key, valid while no change was announced and the LISTEN
    connection is up; the ``size`` most recently used are kept (tenants are many)."""

    def __init__(self, size: int = 2048) -> None:
        self._kept: LruCache[Hashable, tuple[object]] = LruCache(size)
        self._generation = 0
        self._live = False
        #: Reads on their way, by key and the generation they began in (:func:`cached`).
        self._reading: dict[tuple[Hashable, int], asyncio.Future[object]] = {}
        #: Reads answered from the cache since it was made.
        self.hits = 0

    def token(self) -> int | None:
        """Taken before a read: :meth:`put` keeps the read only if nothing changed since
        (``None``: nothing may be kept now)."""
        return self._generation if self._live else None

    def get(self, key: Hashable) -> tuple[object] | None:
        """``(value,)`` read before under ``key``, or ``None``."""
        kept = self._kept.get(key) if self._live else None
        if kept is not None:
            self.hits += 1
        return kept

    def put(self, key: Hashable, value: object, token: int | None) -> None:
        """Keep ``value`` read under ``key`` since ``token``, unless the catalog changed."""
        if token is not None and token == self._generation and self._live:
            self._kept.put(key, (value,))

    def share(self, key: Hashable, token: int, read: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """The read of ``key`` begun since ``token`` by another caller, or ``read`` begun
        now: the value is kept when it comes, unless the catalog changed meanwhile.

        The read runs as a task of its own, so a caller that gives up (a request the
        client dropped) does not cancel it for the others.
        """
        flight = self._reading.get((key, token))
        if flight is None:
            task: asyncio.Future[object] = asyncio.ensure_future(read())
            self._reading[(key, token)] = flight = task
            task.add_done_callback(lambda done: self._landed(key, token, done))
        return asyncio.shield(cast("asyncio.Future[T]", flight))

    def _landed(self, key: Hashable, token: int, done: asyncio.Future[object]) -> None:
        del self._reading[(key, token)]
        # Reading the outcome marks a failure seen even if every caller gave up; a failure
        # is not kept, so the next caller reads again.
        if not done.cancelled() and done.exception() is None:
            self.put(key, done.result(), token)

    def forget(self) -> None:
        """Forget everything kept: the catalog changed."""
        self._generation += 1
        self._kept.clear()

    def changed(self, listening: bool) -> None:
        """The journal listener's word: a change was announced or may have gone unannounced
        (forget everything); ``listening`` is whether changes are announced from now on."""
        self._live = listening
        self.forget()


def attach(pool: Pool, size: int = 2048) -> CatalogCache:
    """A cache of ``pool``'s catalog reads, kept by the pool's readers from now on.

    It keeps nothing until told that changes are announced: give its
    :meth:`CatalogCache.changed` to the process's journal listener (``watch``).
    """
    cache = CatalogCache(size)
    _CACHES[pool] = cache
    return cache


def detach(pool: Pool) -> None:
    """Read ``pool``'s catalog from the database again (the server stopped listening)."""
    _CACHES.pop(pool, None)


@contextlib.asynccontextmanager
async def writing(pool: Pool) -> AsyncIterator[AsyncConnection[DictRow]]:
    """A pooled connection to change the catalog on; what this process kept of it is
    forgotten once the change is committed (or failed), before the caller goes on."""
    try:
        async with pool.connection() as conn:
            yield conn
    finally:
        cache = _CACHES.get(pool)
        if cache is not None:
            cache.forget()


async def cached(pool: Pool, key: Hashable, read: Callable[[], Awaitable[T]]) -> T:
    """What ``read`` returns, kept under ``key`` while ``pool``'s catalog does not change;
    callers that miss ``key`` at once share one ``read``.

    The value is shared by every caller: return nothing a caller may change.
    """
    cache = _CACHES.get(pool)
    if cache is None:
        return await read()
    kept = cache.get(key)
    if kept is not None:
        return cast(T, kept[0])
    token = cache.token()
    if token is None:
        return await read()
    return await cache.share(key, token, read)
