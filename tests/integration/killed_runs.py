"""Runs that die at a known point: a child process SIGKILLed at an event, a worker mid-node.

Both wait for the point (an event read, a file written), never for a time, so
the crash lands where the test means it to.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from plait.engine.store.pool import Pool
from plait.server.queue import runs
from plait.server.queue.journal_writer import JournalCommitter
from plait.server.workers.execution import GraphCache, RunStopper, execute_run
from tests.integration.server.harness import REPO, STOP_TIMEOUT_SECONDS
from tests.integration.server.worker.conftest import SPECS_DIR, file_appears


def run_until_killed(
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    stop_at: Callable[[dict[str, Any]], bool],
    what: str,
) -> list[dict[str, Any]]:
    """Run ``args`` (printing JSON-line events), SIGKILL it at the first event ``stop_at`` accepts.

    Returns the events read, that one last; fails if the process ends first
    (``what`` names the awaited point in the message). The child's stderr is
    left to pytest's capture, so it shows when the test fails.
    """
    process = subprocess.Popen(
        list(args),
        cwd=REPO,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        seen: list[dict[str, Any]] = []
        for line in process.stdout:
            event = json.loads(line)
            seen.append(event)
            if stop_at(event):
                break
        else:
            raise AssertionError(f"the run ended before {what}: {seen}")
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=STOP_TIMEOUT_SECONDS) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
    return seen


async def worker_dies_mid_node(
    pool: Pool,
    run_id: str,
    started: Path,
    *,
    also: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """``worker-a`` claims the pending run ``run_id`` and dies once ``started`` exists
    (and ``also``, when given, has returned).

    The run is of the worker tests' specs. Dying is cancelling its task:
    nothing of it runs any more. Its lease stays, as a dead worker's does, and
    is then made to have expired, so the next worker claims the run as its
    next attempt.
    """
    [claimed] = await runs.claim_runs(pool, "worker-a", 1, 60.0)
    assert claimed.run_id == run_id
    async with JournalCommitter(pool) as journal:
        crashed = asyncio.create_task(
            execute_run(
                claimed,
                pool,
                worker_id="worker-a",
                graphs=GraphCache(pool, SPECS_DIR),
                stopper=RunStopper(),
                journal=journal,
            )
        )
        await file_appears(started)
        if also is not None:
            await also()
        crashed.cancel()
        with pytest.raises(asyncio.CancelledError):
            await crashed
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE plait_runs SET lease_expires_at = now() - interval '1 second' "
            "WHERE run_id = %s",
            (run_id,),
        )
