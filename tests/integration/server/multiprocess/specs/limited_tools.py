"""Tools of ``limited-*.yaml``: each call appends one line to ``$PLAIT_TEST_TOOL_LOG``.

A line is ``<event> <wall time> <pid> <item>`` written with one ``write`` on an
O_APPEND descriptor (atomic across processes), so the test reads what every
worker's calls did, when, on one clock.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from plait.engine.governance.retries import RateLimited

#: What a capped call takes: long enough for calls to overlap.
WORK_SECONDS = 0.05
#: The pause the first throttled call asks for.
RETRY_AFTER_SECONDS = 2.0


def _log(event: str, item: object) -> float:
    now = time.time()
    path = os.environ["PLAIT_TEST_TOOL_LOG"]
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{event} {now:.6f} {os.getpid()} {item}\n".encode())
    finally:
        os.close(fd)
    return now


async def capped(i: int) -> int:
    """Record when it starts and ends, working in between."""
    _log("start", i)
    await asyncio.sleep(WORK_SECONDS)
    _log("end", i)
    return i


async def paced(i: int) -> int:
    """Record when it was called."""
    _log("paced", i)
    return i


async def throttled(i: int) -> int:
    """The first call ever answers 429 with a Retry-After; the others record their start."""
    marker = Path(os.environ["PLAIT_TEST_TOOL_LOG"]).with_suffix(".throttled")
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        _log("ok", i)
        return i
    _log("429", i)
    raise RateLimited("too many requests", retry_after=RETRY_AFTER_SECONDS)


async def hold(i: int) -> int:
    """Record its start, then wait until the test creates the release file."""
    _log("held", i)
    release = Path(os.environ["PLAIT_TEST_TOOL_LOG"]).with_suffix(".release")
    while not release.exists():  # noqa: ASYNC110 - another process creates it
        await asyncio.sleep(0.05)
    return i
