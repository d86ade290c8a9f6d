"""Compiled graphs cached by spec digest (and the digests of every spec they reference)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

Key = tuple[str, tuple[tuple[str, str], ...]]
V = TypeVar("V")


class CompileCache(Generic[V]):
    """A small LRU map; compiled graphs are immutable, so sharing them is safe."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._items: OrderedDict[Key, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get_or_build(self, key: Key, build: Callable[[], V]) -> V:
        """The cached value for ``key``, building (outside the lock) on a miss."""
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                self.hits += 1
                return found
            self.misses += 1
        value = build()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        """Forget every compiled graph (tests, reloads)."""
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0
