"""How many runs a worker takes at once: up to its concurrency, while its core has room.

Runs that wait on models and tools cost a worker almost no CPU, so a worker
serving them should execute many at once; runs that compute saturate its one
core (the GIL) with a few, and every run it takes beyond that makes each run
cost more (measured: 1,000 runs at once 18 runs/s, 50 at once 27). A fixed
``--concurrency`` is right for one kind only. :class:`Admission` lets a
worker execute its first :data:`BASE_RUNS` runs as before, and above that
raises the number it may execute by half every :data:`SAMPLE_SECONDS` while
its process used less than :data:`BUSY` of a core, and lowers it by a quarter
(never under the base) while it used more. Runs are never stopped to lower
it: the worker only claims fewer. The runs it does not take wait in the queue,
where they cost nothing, for this worker or another.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: Runs a worker executes at once however busy it is (its whole concurrency if lower).
BASE_RUNS = 10
#: The share of one core above which a worker is busy: it takes no more runs.
BUSY = 0.9
#: How often the worker's CPU use is read and the number of runs adjusted.
SAMPLE_SECONDS = 0.5


class Admission:
    """The number of runs a worker with ``concurrency`` may execute now.

    ``cpu`` and ``clock`` (seconds) are the process's CPU time and a monotonic
    clock; tests give their own.
    """

    def __init__(
        self,
        concurrency: int,
        *,
        cpu: Callable[[], float] = time.process_time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.concurrency = concurrency
        self.base = min(BASE_RUNS, concurrency)
        self.level = self.base
        self._cpu, self._clock = cpu, clock
        self._at, self._used = clock(), cpu()

    def allowed(self, active: int) -> int:
        """How many runs the worker may execute now, given it executes ``active``."""
        if self.concurrency <= self.base:
            return self.concurrency
        now = self._clock()
        if now - self._at >= SAMPLE_SECONDS:
            used = self._cpu()
            share = (used - self._used) / (now - self._at)
            self._at, self._used = now, used
            if share >= BUSY:
                self.level = max(self.base, self.level - max(1, self.level // 4))
            elif active >= self.level:
                # Raised only when the level is what holds the worker back.
                self.level = min(self.concurrency, self.level + max(1, self.level // 2))
        return self.level
