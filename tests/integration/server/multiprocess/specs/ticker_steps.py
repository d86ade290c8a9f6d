"""The ticker spec's one step: wait a little, count one more."""

from __future__ import annotations

import asyncio

TICK_SECONDS = 0.05


async def tick(ticks: int) -> int:
    """``ticks + 1`` after :data:`TICK_SECONDS`."""
    await asyncio.sleep(TICK_SECONDS)
    return ticks + 1
