"""Python nodes of the observability tests' specs."""

from __future__ import annotations

import time
from pathlib import Path


def wait_for_file(path: str) -> str:
    """Wait until ``path`` exists (the test creates it to let the run finish).

    Sync: a worker runs it in a thread, so the event loop keeps serving.
    """
    deadline = time.monotonic() + 60
    while not Path(path).exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared")
        # Another process creates the file: no event to await, a bounded poll.
        time.sleep(0.02)
    return "released"


def fail(reason: str) -> str:
    """Always fails, with ``reason``."""
    raise ValueError(reason)
