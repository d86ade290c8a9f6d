"""Drive a bound graph through one run: LangGraph's stream in a task of its own, under the
run's time limit, ending only once its checkpointer is idle.

``plait run`` (:mod:`plait.engine.run.runner`) and the server's workers
(``plait.server.workers.execution``) both stream a run through :func:`drive`, so a
run is timed out, stopped and settled the same way wherever it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

from plait.engine.run.timeouts import settle

#: One stream item as LangGraph yields it with ``subgraphs=True``: (namespace, mode, chunk).
Item = tuple[tuple[str, ...], str, Any]


class RunTimedOut(Exception):
    """The run took longer than its spec's ``timeout``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the run exceeded its timeout of {seconds:g}s (spec.timeout)")
        self.seconds = seconds


async def drive(
    graph: Any,
    payload: Any,
    config: Mapping[str, Any],
    *,
    options: Mapping[str, Any],
    limit_seconds: float | None,
    saver: Any,
    span: contextlib.AbstractContextManager[Any] | None = None,
    started: Callable[[asyncio.Task[None]], None] | None = None,
) -> AsyncGenerator[Item, None]:
    """Stream ``graph`` (``options`` go to ``astream``) and yield its items as ``Item``.

    The stream runs in its own task: a time limit around the consumer's loop
    would fire in whatever the consumer awaits between items (rendering,
    prompting, journaling); here it only cancels the task that drives
    LangGraph. ``started`` gets that task, so a caller can stop the run by
    cancelling it (the consumer then sees ``CancelledError``). Raises
    :class:`RunTimedOut` when the run's own deadline passed (a node's own
    ``TimeoutError`` is that node's error, raised as it is). ``span`` (the run's
    trace span) is entered in the task, so the steps' spans are its children.
    On the way out the checkpointer ``saver`` is settled: LangGraph may still
    be writing a checkpoint after a cancel or a timeout.
    """
    subgraphs = bool(options.get("subgraphs"))
    queue: asyncio.Queue[Item | BaseException | None] = asyncio.Queue()

    async def pump() -> None:
        deadline = asyncio.timeout(limit_seconds)
        try:
            with span or contextlib.nullcontext():
                async with deadline:
                    async for item in graph.astream(payload, config, **options):
                        queue.put_nowait(item if subgraphs else ((), *item))
        except TimeoutError:
            if limit_seconds is not None and deadline.expired():
                raise RunTimedOut(limit_seconds) from None
            raise

    def ended(task: asyncio.Task[None]) -> None:
        # A callback, not the task's own code: a task cancelled before it ever
        # ran executes none of its body, and the consumer must still hear of it.
        if task.cancelled():
            queue.put_nowait(asyncio.CancelledError())
        else:
            queue.put_nowait(task.exception())

    task = asyncio.create_task(pump())
    task.add_done_callback(ended)
    if started is not None:
        started(task)
    try:
        while True:
            item = await queue.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        task.cancel()
        await asyncio.wait({task})
        # Shielded: a cancelled consumer must still leave the saver idle.
        await asyncio.shield(settle(saver))
