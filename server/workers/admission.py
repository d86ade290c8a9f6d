"""How many runs a worker takes at once: up to its concurrency, while its core has room.

Runs that wait on models and tools cost a worker almost no CPU, so a worker
serving them should execute many at once; runs that compute saturate its one
core (the GIL) with a few, and every run it takes beyond that makes each run
cost more (measured: 1,000 runs at once 18 runs/s, 50 at once 27). A fixed
``--concurrency`` is right for one kind only. :class:`Admission` lets a
worker execute its first :data:`BASE_RUNS` runs as before, and above that
raises the number it may execute by half every :data:`SAMPLE_SECONDS` while
it has room, and lowers it by a quarter (never under the base) while it is
busy. Busy is either of two signs: its process used :data:`BUSY` of a core
(its runs compute), or its event loop ran a timer :data:`LATE` or more late
(:class:`LoopLag`: the process waits for a core, as on a machine saturated by
other processes, where its own CPU share stays low). Runs are never stopped
to lower it: the worker only claims fewer. The runs it does not take wait in
the queue, where they cost nothing, for this worker or another.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

#: Runs a worker executes at once however busy it is (its whole concurrency if lower).
BASE_RUNS = 10
#: The share of one core above which a worker is busy: it takes no more runs.
BUSY = 0.9
#: How often the worker's CPU use is read and the number of runs adjusted.
SAMPLE_SECONDS = 0.5
#: A loop that ran a timer this late (seconds) is busy: its runs and requests wait too.
LATE = 0.05
#: How often :class:`LoopLag` sets its timer.
PROBE_SECONDS = 0.1


class LoopLag:
    """How late this event loop ran a timer, at worst, since the last :meth:`read`.

    A timer every :data:`PROBE_SECONDS`; the delay between when it was due and
    when it ran is what every callback of the loop waited then.
    """

    def __init__(self) -> None:
        self._worst = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Begin probing the running loop."""
        self._set(asyncio.get_running_loop())

    def stop(self) -> None:
        """Stop probing."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def read(self) -> float:
        """The worst lateness (seconds) since the last read; resets it."""
        worst, self._worst = self._worst, 0.0
        return worst

    def _set(self, loop: asyncio.AbstractEventLoop) -> None:
        due = loop.time() + PROBE_SECONDS
        self._timer = loop.call_at(due, self._ran, loop, due)

    def _ran(self, loop: asyncio.AbstractEventLoop, due: float) -> None:
        self._worst = max(self._worst, loop.time() - due)
        self._set(loop)


class Admission:
    """The number of runs a worker with ``concurrency`` may execute now.

    ``cpu`` and ``clock`` (seconds) are the process's CPU time and a monotonic
    clock, ``lag`` the loop's worst lateness since it was last called
    (:meth:`LoopLag.read`; none by default); tests give their own.
    """

    def __init__(
        self,
        concurrency: int,
        *,
        cpu: Callable[[], float] = time.process_time,
        clock: Callable[[], float] = time.monotonic,
        lag: Callable[[], float] = lambda: 0.0,
    ) -> None:
        self.concurrency = concurrency
        self.base = min(BASE_RUNS, concurrency)
        self.level = self.base
        self._cpu, self._clock, self._lag = cpu, clock, lag
        self._at, self._used = clock(), cpu()

    def allowed(self, active: int) -> int:
        """How many runs the worker may execute now, given it executes ``active``."""
        if self.concurrency <= self.base:
            return self.concurrency
        now = self._clock()
        if now - self._at >= SAMPLE_SECONDS:
            used, late = self._cpu(), self._lag()
            share = (used - self._used) / (now - self._at)
            self._at, self._used = now, used
            if share >= BUSY or late >= LATE:
                self.level = max(self.base, self.level - max(1, self.level // 4))
            elif active >= self.level:
                # Raised only when the level is what holds the worker back.
                self.level = min(self.concurrency, self.level + max(1, self.level // 2))
        return self.level
