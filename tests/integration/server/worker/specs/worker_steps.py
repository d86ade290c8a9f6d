"""Steps of the worker tests' specs: each records its call; ``gate`` waits for a file.

The tests steer runs through files in a folder given as the run's input:
``calls.log`` lists every step call in order, ``<step>.started`` says a gated
step is running, and the step returns once the test creates ``<step>.go``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

#: How often a gated step looks for its file (a condition wait, not a delay).
_POLL_SECONDS = 0.01


def record(folder: str, step: str) -> str:
    """Append ``step`` to ``calls.log`` in ``folder``; the result is the step's name."""
    with (Path(folder) / "calls.log").open("a", encoding="utf-8") as out:
        out.write(f"{step}\n")
    return step


async def gate(folder: str, step: str) -> str:
    """Record the call, create ``<step>.started``, then wait until ``<step>.go`` exists."""
    record(folder, step)
    base = Path(folder)
    (base / f"{step}.started").touch()
    # Another process (the test) creates the file: polling is the portable way to see it.
    while not (base / f"{step}.go").exists():  # noqa: ASYNC110
        await asyncio.sleep(_POLL_SECONDS)
    return step


def blocking_gate(folder: str, step: str) -> str:
    """Like ``gate``, but sync: it blocks its thread, as ordinary user code does."""
    record(folder, step)
    base = Path(folder)
    (base / f"{step}.started").touch()
    while not (base / f"{step}.go").exists():
        time.sleep(_POLL_SECONDS)
    return step


def explode(folder: str) -> str:
    """Fail the way a buggy step does."""
    record(folder, "explode")
    raise ValueError("the step exploded")


def lookup(item: str) -> str:
    """A map item's work: items named ``bad...`` fail."""
    if item.startswith("bad"):
        raise ValueError(f"no such item: {item}")
    return item


async def flaky(folder: str) -> str:
    """Fail once with a network error (retried), then wait at gate ``flaky`` and answer."""
    failed = Path(folder) / "flaky.failed"
    if not failed.exists():
        failed.touch()
        raise ConnectionError("connection reset by peer")
    return await gate(folder, "flaky")
