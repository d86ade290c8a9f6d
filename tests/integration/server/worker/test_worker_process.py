"""``plait worker`` as a real process: SIGTERM hands its running run back to the queue."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from plait.engine.store.pool import Pool
from plait.server.queue import runs
from tests.integration.server.worker.conftest import (
    SPECS_DIR,
    WAIT_SECONDS,
    calls,
    events_of,
    file_appears,
    new_run,
    run_reaches,
    running_worker,
)

pytestmark = pytest.mark.postgres

REPO = Path(__file__).resolve().parents[4]


def _start_worker(database_url: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PLAIT_DATABASE_URL": database_url, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        # A long lease: the run can only come back by the hand-back, not by expiry.
        [
            *(sys.executable, "-m", "plait.server.cli.app", "worker", "--specs", str(SPECS_DIR)),
            *("--concurrency", "2", "--lease-seconds", "60", "--id", "worker-process"),
        ],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


async def _read_until(process: subprocess.Popen[str], marker: str) -> list[str]:
    """The process's output lines up to the first containing ``marker``."""
    assert process.stdout is not None
    lines: list[str] = []
    async with asyncio.timeout(WAIT_SECONDS):
        while True:
            line = await asyncio.to_thread(process.stdout.readline)
            if not line:
                raise AssertionError(f"the worker exited before {marker!r}:\n{''.join(lines)}")
            lines.append(line)
            if marker in line:
                return lines


async def test_sigterm_hands_the_run_back_and_another_worker_finishes_it(
    wpool: Pool, worker_database_url: str, tmp_path: Path
) -> None:
    process = _start_worker(worker_database_url)
    try:
        await _read_until(process, "started")
        run = await new_run(wpool, "worker-steps", input={"folder": str(tmp_path)})
        await file_appears(tmp_path / "two.started")
        running = await runs.get_run(wpool, run.run_id)
        assert running is not None and running.lease_owner == "worker-process"

        process.send_signal(signal.SIGTERM)
        output = await _read_until(process, "stopped")
        assert await asyncio.to_thread(process.wait, WAIT_SECONDS) == 0, "".join(output)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    handed_back = await runs.get_run(wpool, run.run_id)
    assert handed_back is not None
    assert (handed_back.status, handed_back.lease_owner) == ("pending", None)
    assert not [e for e in await events_of(wpool, run.run_id) if e.event == "end"]

    (tmp_path / "two.go").touch()
    async with running_worker(wpool, worker_id="worker-next"):
        finished = await run_reaches(wpool, run.run_id, "success", "error")

    assert (finished.status, finished.attempt) == ("success", 2)
    assert calls(tmp_path) == ["one", "two", "two", "three"]
