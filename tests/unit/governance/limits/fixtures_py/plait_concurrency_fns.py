"""A tool that records how many of its calls overlap (for the concurrency-cap tests)."""

from __future__ import annotations

import asyncio
from collections import Counter

#: Calls in flight now, and the most ever in flight, per key.
ACTIVE: Counter[str] = Counter()
PEAK: Counter[str] = Counter()
#: Event-loop turns each call stays in flight: every other call started by then overlaps.
TURNS = 20


async def overlap(key: str, index: int) -> int:
    """Stay in flight for a few loop turns (no wall-clock wait), counting overlapping calls."""
    ACTIVE[key] += 1
    PEAK[key] = max(PEAK[key], ACTIVE[key])
    try:
        for _ in range(TURNS):
            await asyncio.sleep(0)  # hand the loop to the other calls
    finally:
        ACTIVE[key] -= 1
    return index
