"""Pause Python's cyclic garbage collector around short, allocation-heavy phases."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic GC off, then restore it.

    Reading, linting and compiling a large spec allocate tens of thousands of
    objects, which triggers full collections that scan every object LangGraph,
    pydantic and the app hold: measured here, one such pass cost 80 ms while the
    parse itself took 30 ms. Reference counting still frees memory meanwhile;
    the collector runs again at its next threshold (see docs/decisions.md).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
