"""A pool that counts the connections taken from it: how tests see how many lookups a
burst of requests sent (each lookup takes one)."""

from __future__ import annotations

from typing import Any

from plait.engine.store.pool import Pool


class CountingPool:
    """``pool``, counting :meth:`connection` calls in :attr:`taken`."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.taken = 0

    def connection(self, *args: Any, **kwargs: Any) -> Any:
        """``pool.connection(...)``, counted."""
        self.taken += 1
        return self.pool.connection(*args, **kwargs)
