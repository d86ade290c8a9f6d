"""Python nodes for ``blocking.yaml``: each appends to a log file, one waits for a file.

The log counts side effects, so a test can tell which nodes ran again after a
killed run was continued.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

_POLL_SECONDS = 0.05


def record(log: str, step: str) -> str:
    """Append ``step`` to the log; the result is the step's name."""
    with Path(log).open("a", encoding="utf-8") as out:
        out.write(step + "\n")
    return step


async def wait_for_release(log: str, release: str) -> str:
    """Log the start, then wait until the ``release`` file exists (or the process dies)."""
    record(log, "wait-started")
    # The file comes from another process, so there is no event to await: poll it.
    while not await asyncio.to_thread(Path(release).exists):  # noqa: ASYNC110
        await asyncio.sleep(_POLL_SECONDS)
    return record(log, "wait-finished")
