"""Python nodes for the runner tests."""

from __future__ import annotations

import asyncio
from pathlib import Path


async def pause(seconds: float) -> float:
    """Sleep, then return how long."""
    await asyncio.sleep(seconds)
    return seconds


def require_file(path: str) -> str:
    """Fail until ``path`` exists (a failure someone fixes before continuing the thread)."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{path} is missing")
    return "found"


def increment(count: int) -> int:
    """``count + 1``."""
    return count + 1
