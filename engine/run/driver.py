"""Drive a bound graph through one run: LangGraph's stream in a task of its own, under
the run's time limit, ending only once its checkpointer is idle.

``plait run`` (:mod:`plait.engine.run.runner`) and the server's workers
(``plait.server.workers.execution``) both stream a run through :func:`drive`, so a
run is timed out, stopped and settled the same way wherever it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from plait.engine.run.timeouts import settle
from plait.engine.store.checkpointer import steps_in_one_trip

#: One stream item as LangGraph yields it with ``subgraphs=True``: (namespace, mode, chunk).
Item = tuple[tuple[str, ...], str, Any]


class RunTimedOut(Exception):
    """The run took longer than its spec's ``timeout``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the run exceeded its timeout of {seconds:g}s (spec.timeout)")


async def drive(
    graph: Any,
    payload: Any,
    config: Mapping[str, Any],
    *,
    options: Mapping[str, Any],
    limit_seconds: float | None,
    saver: Any,
    each: Callable[[Item], None],
    span: contextlib.AbstractContextManager[Any] | None = None,
    started: Callable[[asyncio.Task[None]], None] | None = None,
    hold_last: bool = False,
) -> None:
    """Stream ``graph`` (``options`` go to ``astream``), calling ``each`` on every item.

    The stream runs in a task of its own, and ``each`` is called in it, in
    order and synchronously (it must not wait: journal, count, or hand the item
    to a queue). A time limit around the caller's code would fire in whatever
    the caller awaits (rendering, prompting); here it only cancels the task
    that drives LangGraph. ``started`` gets that task, so a caller can stop the
    run by cancelling it: ``drive`` then raises ``CancelledError``. Raises
    :class:`RunTimedOut` when the run's own deadline passed (a node's own
    ``TimeoutError`` is that node's error, raised as it is). ``span`` (the run's
    trace span) is entered in the task, so the steps' spans are its children.
    On the way out the checkpointer ``saver`` is settled: LangGraph may still
    be writing a checkpoint after a cancel or a timeout. While the run is
    driven, a :class:`~plait.engine.store.checkpointer.StepSaver` sends each
    step's task writes with its checkpoint (one round trip per step), and
    stores what is left when the run stops; with ``hold_last`` the last checkpoint
    of a run that ends without an error is left to the caller
    (:meth:`~plait.engine.store.checkpointer.StepSaver.last_step`).
    """
    subgraphs = bool(options.get("subgraphs"))

    async def pump() -> None:
        deadline = asyncio.timeout(limit_seconds)
        try:
            with span or contextlib.nullcontext():
                async with deadline:
                    async for item in graph.astream(payload, config, **options):
                        each(item if subgraphs else ((), *item))
        except TimeoutError:
            if limit_seconds is not None and deadline.expired():
                raise RunTimedOut(limit_seconds) from None
            raise

    async with steps_in_one_trip(saver, hold_last=hold_last):
        task = asyncio.create_task(pump())
        if started is not None:
            started(task)
        try:
            await task
        finally:
            if not task.done():  # the caller was cancelled, not the graph
                task.cancel()
                await asyncio.wait({task})
            # A run that ended on its own leaves nothing writing: LangGraph awaited its
            # saves. Only a stopped one may (a cancel, a time limit, an error), and only
            # then is every task of the process searched: at a thousand runs at once,
            # searching after every run cost an eighth of the server's CPU.
            if task.cancelled() or task.exception() is not None:
                # Shielded: a cancelled caller must still leave the saver idle.
                await asyncio.shield(settle(saver))
