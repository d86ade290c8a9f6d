"""Python functions the compiler tests call through ``python`` nodes and tools."""

from __future__ import annotations

import asyncio
from typing import Any

#: Attempts per key, so a test can see how often a flaky function ran.
ATTEMPTS: dict[str, int] = {}


def add(a: int, b: int) -> int:
    return a + b


def count_fields(state: dict[str, Any]) -> int:
    """Receives the whole (public) state when the node gives no args."""
    return len(state)


async def async_echo(value: Any) -> Any:
    await asyncio.sleep(0)
    return value


async def sleep_for(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "woke"


def flaky(key: str, failures: int) -> str:
    """Raises ConnectionError ``failures`` times for ``key``, then succeeds."""
    ATTEMPTS[key] = ATTEMPTS.get(key, 0) + 1
    if ATTEMPTS[key] <= failures:
        raise ConnectionError(f"attempt {ATTEMPTS[key]} failed")
    return f"ok after {ATTEMPTS[key]}"


def broken(key: str) -> None:
    """Always raises a TypeError (a programming error: never retried)."""
    ATTEMPTS[key] = ATTEMPTS.get(key, 0) + 1
    raise TypeError("broken on purpose")


async def process(x: Any) -> Any:
    """Map item work: ``slow`` sleeps past any timeout, ``bad`` fails, numbers square."""
    if x == "slow":
        await asyncio.sleep(30)
    if x == "bad":
        raise ValueError("bad item")
    return x * x if isinstance(x, int) else x


def lookup(query: str) -> str:
    """Look a word up in the tiny test dictionary."""
    return {"plait": "a braid"}.get(query, "unknown")


def explode(reason: str) -> str:
    raise RuntimeError(f"tool exploded: {reason}")


def slow_tool(seconds: float) -> str:
    """A sync tool that blocks (runs in a worker thread)."""
    import time

    time.sleep(seconds)
    return "done"


def collect(**values: Any) -> dict[str, Any]:
    """Return the keyword arguments it was given."""
    return values


def append_one(items: list[Any]) -> int:
    """Change the list it was given (a literal argument must not remember it)."""
    items.append("one more")
    return len(items)
