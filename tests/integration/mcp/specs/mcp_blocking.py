"""A python tool that blocks until a file exists (``mcp-killed.yaml``)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def block() -> str:
    """Wait until the file ``PLAIT_TEST_RELEASE`` names exists (a sync tool: runs in a thread)."""
    release = Path(os.environ["PLAIT_TEST_RELEASE"])
    while not release.exists():
        time.sleep(0.05)  # a file another process creates: polled
    return "released"
