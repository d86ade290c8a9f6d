"""A worker takes more runs while its core has room, fewer when it is busy, never under ten."""

from __future__ import annotations

from plait.server.workers.admission import BASE_RUNS, SAMPLE_SECONDS, Admission


class Process:
    """A clock and the CPU time a process used, moved by the test."""

    def __init__(self) -> None:
        self.now = 0.0
        self.used = 0.0

    def run_for(self, seconds: float, share: float) -> None:
        """``seconds`` pass while the process uses ``share`` of a core."""
        self.now += seconds
        self.used += seconds * share


def admission(concurrency: int, process: Process) -> Admission:
    return Admission(concurrency, cpu=lambda: process.used, clock=lambda: process.now)


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
