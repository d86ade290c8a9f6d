"""Looking at processes from tests: is a pid still running, clean up what tools noted."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


def running(pid: int) -> bool:
    """Whether ``pid`` runs (read from /proc; a zombie, ended and not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def noted_pids(path: Path) -> list[int]:
    """The pids a tool wrote to ``path`` (one per line; none when the file is missing)."""
    text = path.read_text() if path.exists() else ""
    return [int(word) for word in text.split() if word.isdigit()]


def kill_noted(folder: Path) -> None:
    """SIGKILL every process noted in ``folder``'s files that still runs (test clean-up)."""
    for noted in folder.iterdir():
        for pid in noted_pids(noted):
            if running(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
