"""Fire durable timers: a ``wait`` node's time, an approval's expiry; once, from any worker.

A run that stops on a ``wait`` node (or on an approval with ``expires_in``)
ends parked; its worker writes a timer row for the interrupt
(:mod:`plait.server.queue.timers`) and no worker waits for it. Every worker
looks for due timers every :data:`TIMER_POLL_SECONDS`. For each it takes the
thread's lock (as every run-creating transaction does first), marks the timer
fired only if it is still pending and creates the resume run in the same
transaction: a second worker blocks on the lock and then finds it fired, and a
worker that dies mid-way rolls all of it back, so the next worker fires it. A
timer whose time passed while no worker ran fires when the first one starts.

A wait is resumed with ``{"plait": "timer", ...}`` through the path an API
resume takes (:func:`plait.server.queue.runs.resume_thread_in`: the thread's
queue order, tenant and fencing hold); an approval's expiry resolves it as its
``on_expire`` says (:func:`plait.server.queue.decisions.expire_in`).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from plait.engine.compiler import TIMER_FIRED
from plait.engine.store import Pool
from plait.server.graphs.versions import get_version
from plait.server.operations import metrics
from plait.server.queue import decisions, timers
from plait.server.queue.runs import resume_thread_in, thread_transaction
from plait.server.queue.timers import Timer

log = logging.getLogger(__name__)

#: How often a worker looks for due timers: a timer fires within about this of its time.
TIMER_POLL_SECONDS = 0.5
#: Timers one worker fires per look.
BATCH = 50


class GraphGone(LookupError):
    """The graph version a timer's thread runs is not registered: its resume cannot run."""


class TimerFirer:
    """Fires the timers that are due; call :meth:`fire_due` now and then."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def fire_due(self) -> int:
        """Fire every due timer (up to :data:`BATCH`); return how many this worker fired."""
        fired = 0
        for timer in await timers.due(self.pool, BATCH):
            try:
                fired += await self._fire(timer)
            except GraphGone as exc:
                # It can never fire: said once, not every poll.
                if await timers.give_up(self.pool, timer.timer_id):
                    log.warning(
                        "timer %s of thread %s cancelled: %s", timer.timer_id, timer.thread_id, exc
                    )
            except Exception as exc:
                # One timer that cannot fire now must not stop the rest; it is tried again.
                log.warning(
                    "timer %s of thread %s did not fire: %s", timer.timer_id, timer.thread_id, exc
                )
        return fired

    async def _fire(self, timer: Timer) -> int:
        graph = await get_version(self.pool, timer.graph, timer.version, tenant=timer.tenant)
        if graph is None:
            raise GraphGone(f"graph {timer.graph}@{timer.version} is not registered any more")
        async with thread_transaction(self.pool, timer.thread_id) as conn:
            taken = await timers.take_in(conn, timer.timer_id)
            if taken is None:
                return 0  # fired by another worker, or answered first
            if taken.kind == "approval_expiry":
                resolved = await decisions.expire_in(
                    conn, taken.thread_id, taken.interrupt_id, graph
                )
                run_id = resolved[1].run_id if resolved is not None else None
            else:
                answer = {"plait": TIMER_FIRED, "due_at": taken.due_at.isoformat()}
                run = await resume_thread_in(
                    conn,
                    thread_id=taken.thread_id,
                    graph=graph,
                    parked_run_id=taken.run_id,
                    interrupt_id=taken.interrupt_id,
                    answer=answer,
                    metadata={"plait_timer": {**answer, "node": taken.node}},
                    origin={"timer": taken.timer_id},
                    tenant=taken.tenant,
                )
                run_id = run.run_id
            await timers.set_resume_run_in(conn, taken.timer_id, run_id)
        fired_at = taken.fired_at or datetime.now(UTC)
        metrics.timer_fired(taken.kind, (fired_at - taken.due_at).total_seconds())
        log.info(
            "timer %s (%s, node %s) fired: thread %s resumed by run %s",
            taken.timer_id,
            taken.kind,
            taken.node,
            taken.thread_id,
            run_id,
        )
        return 1
