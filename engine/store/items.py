"""LangGraph's long-term store (``/store``, ``get_store()`` in nodes) on Postgres, per tenant.

One :class:`~langgraph.store.postgres.AsyncPostgresStore` per process holds every
tenant's items in LangGraph's own ``store`` table. A :class:`TenantStore` is
what a request or a run sees: every namespace it names is stored under the
tenant's id as an extra first label, which it never shows. A tenant's
``("memories",)`` is ``(tenant, "memories")`` in the table; tenant ids are
``[a-z0-9_-]`` (no ``.``, which Postgres store prefixes use as separator), so
one tenant's namespaces can never name another's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.postgres.aio import AsyncPostgresStore

from plait.engine.store.pool import Pool

#: Expired items are never returned, and reading an item renews its TTL (as the Agent Server).
TTL: TTLConfig = {"refresh_on_read": True, "omit_expired": True}


def open_item_store(pool: Pool) -> AsyncPostgresStore:
    """The process's store over ``pool`` (call on its event loop; one per process is enough).

    Over a pool, the store takes a connection per call and holds no lock across
    calls, so concurrent runs and requests do not wait for each other.
    """
    return AsyncPostgresStore(pool, ttl=TTL)


class TenantStore(BaseStore):
    """``store`` as ``tenant`` sees it: its own namespaces only, without the tenant label.

    Async calls (``aput``, ``aget``, ...) work anywhere on the store's loop; the
    sync ones (``put``, ``get``, ...) from other threads only, e.g. in a sync
    ``python`` node, which server workers run in a thread.
    """

    supports_ttl = True
    ttl_config = TTL

    def __init__(self, store: AsyncPostgresStore, tenant: str) -> None:
        if not tenant or "." in tenant:
            raise ValueError(f"a tenant id cannot be a namespace label: {tenant!r}")
        self.store = store
        self.tenant = tenant

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in the tenant's namespaces."""
        results = await self.store.abatch([self._inside(op) for op in ops])
        return [self._outside(result) for result in results]

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`abatch` from a thread other than the store's event loop's."""
        loop = self.store.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            # Waiting here for the loop we block would hang forever.
            raise RuntimeError(
                "the store's sync methods (get, put, search, ...) cannot run on its event "
                "loop: use aget, aput, asearch, ... in async code"
            )
        return asyncio.run_coroutine_threadsafe(self.abatch(list(ops)), loop).result()

    def _inside(self, op: Op) -> Op:
        """``op`` with the tenant's label in front of every namespace it names."""
        if isinstance(op, GetOp | PutOp):
            return op._replace(namespace=(self.tenant, *op.namespace))
        if isinstance(op, SearchOp):
            return op._replace(namespace_prefix=(self.tenant, *op.namespace_prefix))
        if isinstance(op, ListNamespacesOp):
            return self._list_inside(op)
        raise TypeError(f"unknown store operation {type(op).__name__}")

    def _list_inside(self, op: ListNamespacesOp) -> ListNamespacesOp:
        conditions = list(op.match_conditions or ())
        prefixed = False
        for index, condition in enumerate(conditions):
            if condition.match_type == "prefix" and not prefixed:
                conditions[index] = MatchCondition("prefix", (self.tenant, *condition.path))
                prefixed = True
        if not prefixed:
            conditions.insert(0, MatchCondition("prefix", (self.tenant,)))
        depth = None if op.max_depth is None else op.max_depth + 1
        return op._replace(match_conditions=tuple(conditions), max_depth=depth)

    def _outside(self, result: Result) -> Result:
        """``result`` as the tenant sees it: its namespaces without the tenant's label."""
        if isinstance(result, Item):
            return self._strip(result)
        if isinstance(result, list):
            return [self._strip_any(entry) for entry in result]
        return result

    def _strip_any(self, entry: Any) -> Any:
        if isinstance(entry, tuple):
            return entry[1:]  # a namespace of list_namespaces
        return self._strip(entry)

    def _strip(self, item: Item) -> Item:
        namespace = item.namespace[1:]
        if isinstance(item, SearchItem):
            return SearchItem(
                namespace, item.key, item.value, item.created_at, item.updated_at, item.score
            )
        return Item(
            namespace=namespace,
            key=item.key,
            value=item.value,
            created_at=item.created_at,
            updated_at=item.updated_at,
        )
