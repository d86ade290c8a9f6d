"""``plait queue dead-letters`` and ``plait queue requeue`` against a real database."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from plait.engine.store.pool import Pool
from plait.server.graphs.versions import GraphVersion
from plait.server.queue.runs import (
    Run,
    claim_runs,
    create_run,
    dead_letter_of,
    finish_run,
    get_run,
)
from plait.server.queue.threads import create_thread
from tests.integration.cli.conftest import REPO, plait_env
from tests.integration.server.queue.conftest import unique

pytestmark = pytest.mark.postgres

LEASE = 30.0
EXPIRED = -1.0


async def _dead_letter(pool: Pool, graph: GraphVersion) -> Run:
    """A run whose three attempts lost their worker, dead-lettered as a worker does it."""
    thread = await create_thread(pool, thread_id=unique("t"))
    await create_run(
        pool, thread_id=thread["thread_id"], graph=graph, kwargs={"input": {}}, metadata={}
    )
    for _ in range(3):
        await claim_runs(pool, "dying", 1, EXPIRED)
    [claimed] = await claim_runs(pool, "w", 1, LEASE)
    assert claimed.lost_attempts == 3
    record = dead_letter_of(claimed, 3)
    assert await finish_run(
        pool,
        claimed.run_id,
        "w",
        "dead_lettered",
        "dead",
        attempt=claimed.attempt,
        dead_letter=record,
    )
    return claimed


async def _plait(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "plait.server.cli.app", *args],
        cwd=REPO,
        env=plait_env(url),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def test_an_operator_lists_and_requeues_a_dead_letter(
    qpool: Pool, qgraph: GraphVersion, queue_database_url: str
) -> None:
    dead = await _dead_letter(qpool, qgraph)

    listed = await _plait(queue_database_url, "queue", "dead-letters")
    assert listed.returncode == 0, listed.stderr
    [shown] = json.loads(listed.stdout)
    assert (shown["run_id"], shown["status"], shown["plait_status"]) == (
        dead.run_id,
        "error",
        "dead_lettered",
    )
    assert shown["dead_letter"]["attempts"] == 3

    requeued = await _plait(queue_database_url, "queue", "requeue", dead.run_id)
    assert requeued.returncode == 0, requeued.stderr
    assert json.loads(requeued.stdout)["status"] == "pending"
    run = await get_run(qpool, dead.run_id)
    assert run is not None and (run.status, run.lost_attempts, run.dead_letter) == (
        "pending",
        0,
        None,
    )
    assert json.loads((await _plait(queue_database_url, "queue", "dead-letters")).stdout) == []

    again = await _plait(queue_database_url, "queue", "requeue", dead.run_id)
    assert again.returncode == 2
    assert "pending, not dead-lettered" in again.stderr
    unknown = await _plait(queue_database_url, "queue", "requeue", "no-such-run")
    assert unknown.returncode == 2 and "run no-such-run not found" in unknown.stderr
