"""Python's cyclic garbage collector in a long-running ``plait serve`` or ``plait worker``."""

from __future__ import annotations

import gc

#: Container allocations (net of frees) between two collections of the young generation.
#: CPython's 700 made the server collect every few steps of a run: 5% of its CPU.
YOUNG_COLLECTION_THRESHOLD = 10_000


def tune_for_serving() -> None:
    """Leave out of every later collection what start-up loaded (modules, LangGraph,
    pydantic models: hundreds of thousands of objects a full collection would scan
    again and again), and collect the young generation less often.

    Cyclic garbage is still freed, in larger batches (docs/decisions.md 109).
    """
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, middle, old)
