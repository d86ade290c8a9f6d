"""Steps of ``once.yaml``: slow steps, and side effects logged one line per real execution.

``charge`` and ``ship`` append ``<order> <pid>`` to ``<logs>/<tool>.log``
(O_APPEND: atomic across processes) between two pauses, so a worker killed
at random often dies after an effect and before its result is recorded.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

STEP_SECONDS = 0.3
BEFORE_SECONDS = 0.1
AFTER_SECONDS = 0.3


async def slow_step(name: str) -> str:
    """Take a while, so that kills land in the middle of runs."""
    await asyncio.sleep(STEP_SECONDS)
    return name


def _effect(logs: str, tool: str, order: str) -> None:
    fd = os.open(Path(logs) / f"{tool}.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{order} {os.getpid()}\n".encode())
    finally:
        os.close(fd)


def executions(logs: str, tool: str, order: str) -> int:
    """How often ``tool`` really ran for ``order``."""
    path = Path(logs) / f"{tool}.log"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return sum(1 for line in lines if line.split()[0] == order)


async def charge(logs: str, order: str) -> dict[str, Any]:
    """Charge the order: a side effect between two pauses."""
    await asyncio.sleep(BEFORE_SECONDS)
    _effect(logs, "charge", order)
    await asyncio.sleep(AFTER_SECONDS)
    return {"charged": order}


def charged(args: dict[str, Any], key: str) -> dict[str, Any]:
    """Reconcile ``charge``: did the order get charged? (read from the log, as from a ledger)."""
    if executions(args["logs"], "charge", args["order"]):
        return {"happened": True, "result": {"charged": args["order"], "reconciled": True}}
    return {"happened": False}


async def ship(logs: str, order: str) -> dict[str, Any]:
    """Ship the order: a side effect between two pauses; no reconcile (a person settles doubt)."""
    await asyncio.sleep(BEFORE_SECONDS)
    _effect(logs, "ship", order)
    await asyncio.sleep(AFTER_SECONDS)
    return {"shipped": order}
