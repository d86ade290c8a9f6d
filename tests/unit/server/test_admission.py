"""A worker takes more runs while its core has room, fewer when it is busy, never under ten."""

from __future__ import annotations

import asyncio
import time

from plait.server.workers.admission import (
    BASE_RUNS,
    LATE,
    PROBE_SECONDS,
    SAMPLE_SECONDS,
    Admission,
    LoopLag,
)


class Process:
    """A clock and the CPU time a process used, moved by the test."""

    def __init__(self) -> None:
        self.now = 0.0
        self.used = 0.0

    def run_for(self, seconds: float, share: float) -> None:
        """``seconds`` pass while the process uses ``share`` of a core."""
        self.now += seconds
        self.used += seconds * share


def admission(concurrency: int, process: Process, lag: float = 0.0) -> Admission:
    return Admission(
        concurrency, cpu=lambda: process.used, clock=lambda: process.now, lag=lambda: lag
    )


def test_a_worker_of_ten_or_fewer_runs_takes_them_all_however_busy() -> None:
    process = Process()
    worker = admission(10, process)
    process.run_for(SAMPLE_SECONDS, 1.0)
    assert worker.allowed(10) == 10


def test_runs_that_wait_let_the_worker_grow_to_its_concurrency() -> None:
    process = Process()
    worker = admission(200, process)
    assert worker.allowed(0) == BASE_RUNS
    levels = []
    for _ in range(12):
        process.run_for(SAMPLE_SECONDS, 0.3)  # waiting on models: a third of a core
        levels.append(worker.allowed(worker.level))
    assert levels[:4] == [15, 22, 33, 49]
    assert levels[-1] == 200


def test_a_busy_worker_stops_growing_and_comes_back_down_to_the_base() -> None:
    process = Process()
    worker = admission(200, process)
    for _ in range(5):
        process.run_for(SAMPLE_SECONDS, 0.5)
        worker.allowed(worker.level)
    grown = worker.level
    process.run_for(SAMPLE_SECONDS, 0.95)
    assert worker.allowed(grown) < grown
    for _ in range(20):
        process.run_for(SAMPLE_SECONDS, 1.0)
        worker.allowed(grown)
    assert worker.level == BASE_RUNS


def test_the_level_grows_only_when_it_is_what_holds_the_worker_back() -> None:
    process = Process()
    worker = admission(200, process)
    process.run_for(SAMPLE_SECONDS, 0.1)
    assert worker.allowed(3) == BASE_RUNS  # three runs, room for ten: no need for more


def test_within_a_sample_the_level_holds() -> None:
    process = Process()
    worker = admission(200, process)
    process.run_for(SAMPLE_SECONDS / 2, 0.0)
    assert worker.allowed(BASE_RUNS) == BASE_RUNS


def test_a_late_loop_stops_growth_though_its_process_uses_little_cpu() -> None:
    """A machine saturated by other processes: the worker waits for a core, its share stays low."""
    process = Process()
    grown = admission(200, process)
    late = admission(200, process, lag=LATE)
    for _ in range(5):
        process.run_for(SAMPLE_SECONDS, 0.3)
        grown.allowed(grown.level)
        late.allowed(late.level)
    assert grown.level > 40
    assert late.level == BASE_RUNS


async def test_loop_lag_reports_how_long_the_loop_was_blocked() -> None:
    lag = LoopLag()
    lag.start()
    try:
        busy_until = time.monotonic() + 3 * PROBE_SECONDS
        while time.monotonic() < busy_until:  # the loop computes: its timers wait
            pass
        # Due after the probe's timer, so it runs after the probe ran late.
        await asyncio.sleep(PROBE_SECONDS)
        assert lag.read() >= PROBE_SECONDS
        assert lag.read() == 0.0  # read once
    finally:
        lag.stop()
