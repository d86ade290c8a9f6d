"""Tools of ``charging_agent.yaml``: a logged side effect, and a wait for a file.

Paths come from the environment because a scripted model's arguments are
constants in the spec.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def charge(order: str, cents: int) -> dict[str, object]:
    """Charge ``order``: appends one line to the side-effect log."""
    with Path(os.environ["PLAIT_TEST_TOOL_LOG"]).open("a", encoding="utf-8") as out:
        out.write(f"charged {order} {cents}\n")
    return {"order": order, "cents": cents, "status": "charged"}


def wait_for_release() -> str:
    """Return at once when the release file exists; otherwise wait until the process dies."""
    if not Path(os.environ["PLAIT_TEST_TOOL_RELEASE"]).exists():
        threading.Event().wait()  # nothing sets it: only SIGKILL ends this call
    return "released"
