"""What a run must wait for after it stops, so nothing of it is left running.

When a run is cancelled (``spec.timeout``), LangGraph submits the cancelled
task's checkpoint writes to its background executor after that executor has
already taken its list of tasks to wait for, so ``astream`` can end while an
``aput_writes`` is still in flight. Every run has a checkpointer of its own
(docs/decisions.md, 19), so the tasks still running a method of that saver
are exactly the run's leftovers.
"""

from __future__ import annotations

import asyncio
from typing import Any


def _owned_by(task: asyncio.Task[Any], owner: object) -> bool:
    coro = task.get_coro()
    frame = getattr(coro, "cr_frame", None)
    return frame is not None and frame.f_locals.get("self") is owner


async def settle(checkpointer: object) -> None:
    """Wait until no task is still running a method of ``checkpointer``."""
    pending = [
        task for task in asyncio.all_tasks() if not task.done() and _owned_by(task, checkpointer)
    ]
    if pending:
        await asyncio.wait(pending)
