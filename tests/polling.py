"""Waiting for a condition in tests: poll with a deadline, never a fixed sleep."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

#: How long a wait may take before the test fails (generous: CI machines are busy).
DEADLINE_SECONDS = 60.0
#: How often a wait re-checks its condition.
POLL_SECONDS = 0.02


async def until(
    check: Callable[[], Awaitable[Any]], what: str, limit: float = DEADLINE_SECONDS
) -> Any:
    """Poll ``await check()`` until it returns something truthy; fail after ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {limit:g}s waiting for {what}")
        await asyncio.sleep(POLL_SECONDS)
