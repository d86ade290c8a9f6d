"""Tools of ``doubtful.yaml``: side effects logged to a file, and a process that dies around them.

``PLAIT_TEST_EFFECTS`` names the log (one line per real execution, ``<tool>
<order>``). When ``PLAIT_TEST_DIE`` is ``<tool>:before`` or ``<tool>:after``,
that tool announces the point (a custom event ``{"test": "dying", ...}``) and
waits there until its process is killed: before the effect, or after it and
before it returns (so before its result can be recorded).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from plait.engine.observability.emit import emit


async def _maybe_die(tool: str, point: str) -> None:
    if os.environ.get("PLAIT_TEST_DIE") == f"{tool}:{point}":
        emit({"test": "dying", "tool": tool, "point": point})
        await asyncio.Event().wait()  # nothing sets it: only SIGKILL ends this call


def _effect(tool: str, order: str) -> int:
    log = Path(os.environ["PLAIT_TEST_EFFECTS"])
    with log.open("a", encoding="utf-8") as out:
        out.write(f"{tool} {order}\n")
    return sum(1 for line in log.read_text(encoding="utf-8").splitlines() if line.startswith(tool))


async def send(order: str) -> dict[str, Any]:
    """Send ``order`` (not idempotent, no reconcile: a call in doubt asks a person)."""
    await _maybe_die("send", "before")
    n = _effect("send", order)
    await _maybe_die("send", "after")
    return {"sent": order, "n": n}


async def ship(order: str) -> dict[str, Any]:
    """Ship ``order`` (not idempotent; ``shipped`` reconciles it)."""
    await _maybe_die("ship", "before")
    n = _effect("ship", order)
    await _maybe_die("ship", "after")
    return {"shipped": order, "n": n}


def shipped(args: dict[str, Any], key: str) -> dict[str, Any]:
    """Whether ``ship(order)`` happened, read from the log as a real one reads its system."""
    log = Path(os.environ["PLAIT_TEST_EFFECTS"])
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    if f"ship {args['order']}" in lines:
        return {"happened": True, "result": {"shipped": args["order"], "reconciled": True}}
    return {"happened": False}
