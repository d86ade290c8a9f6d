"""Tools that start processes and never wait for them to end (the children tests).

Each writes the pids it started to ``$PLAIT_TEST_PIDS/<name>`` (one per line)
so the test knows which processes to look for.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

#: Long enough to outlive any test; unusual, so a stray one is easy to spot.
SLEEP = "987654"


def _note(name: str, *pids: int) -> None:
    path = Path(os.environ["PLAIT_TEST_PIDS"]) / name
    path.write_text("".join(f"{pid}\n" for pid in pids), encoding="utf-8")


async def sleep_async(name: str) -> str:
    """Start ``sleep`` with asyncio and wait for it: only a timeout ends this call."""
    process = await asyncio.create_subprocess_exec("sleep", SLEEP)
    _note(name, process.pid)
    await process.wait()  # no finally: a timeout leaves the process to whoever cleans up
    return "slept"


def sleep_sync(name: str) -> str:
    """Start ``sleep`` with ``subprocess`` and wait for it (a sync tool: runs in a thread)."""
    process = subprocess.Popen(["sleep", SLEEP])
    _note(name, process.pid)
    process.wait()
    return "slept"


def sleep_in_shell(name: str) -> str:
    """A shell whose child is the ``sleep``: both are the call's (the child as a descendant)."""
    path = Path(os.environ["PLAIT_TEST_PIDS"]) / f"{name}.child"
    process = subprocess.Popen(["sh", "-c", f"sleep {SLEEP} & echo $! > {path}; wait"])
    while not path.exists() or not path.read_text().strip():
        time.sleep(0.01)  # the shell writes the file
    _note(name, process.pid, int(path.read_text()))
    process.wait()
    return "slept"


def start_and_return(name: str) -> str:
    """Leave a ``sleep`` running and return: the call ended well, its process is left alone."""
    process = subprocess.Popen(["sleep", SLEEP])
    _note(name, process.pid)
    return "started"


def start_after_timeout(name: str) -> str:
    """Outlive the call's timeout, then try to start a process (refused: the call has ended)."""
    time.sleep(float(os.environ.get("PLAIT_TEST_OUTLIVE", "1.0")))
    try:
        process = subprocess.Popen(["sleep", SLEEP])
    except RuntimeError as exc:
        Path(os.environ["PLAIT_TEST_PIDS"], name).write_text(f"refused: {exc}")
        return "refused"
    _note(name, process.pid)
    return "started"
