"""Python nodes for ``gated.yaml``: each waits for its gate file, then logs its name.

A test opens the gates of the steps it lets finish and kills the process while
the next step waits at its gate, so the kill lands exactly on a step boundary
and the log tells which nodes ran again.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

_POLL_SECONDS = 0.02


async def gated(log: str, gates: str, step: str) -> str:
    """Mark ``gates/step.started``, wait until ``gates/step`` exists, then append ``step`` to
    the log; return ``step``."""
    gate = Path(gates) / step
    # The node's own code has begun: its step has started, in the node's own sense.
    await asyncio.to_thread((Path(gates) / f"{step}.started").touch)
    # The gate comes from another process, so there is no event to await: poll it.
    while not await asyncio.to_thread(gate.exists):  # noqa: ASYNC110
        await asyncio.sleep(_POLL_SECONDS)
    await asyncio.to_thread(_append, log, step)
    return step


def _append(log: str, line: str) -> None:
    with Path(log).open("a", encoding="utf-8") as out:
        out.write(line + "\n")
