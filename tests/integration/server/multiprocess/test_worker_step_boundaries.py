"""A worker SIGKILLed at any step boundary: the next worker loses and repeats no step.

``gated.yaml`` (the CLI's boundary test graph) is a -> (b1 | b2) -> c -> d, each
node waiting at a gate file after marking that it started. A worker keeps a
step's checkpoint until the next step's nodes begin, and the last one for the
transaction that ends the run (``StepSaver``'s ``hold_last``): this is what must
still hold. For each boundary the test opens the gates of the steps before it,
SIGKILLs every worker once each node of the next step has started its own code,
starts a new worker, opens every gate and waits for the run to end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from tests.integration.cli.conftest import TEST_SPECS
from tests.integration.gated import NODES, STEPS, open_gates
from tests.integration.server.harness import Cluster, fresh_cluster
from tests.integration.server.worker.conftest import file_appears

SOURCES = [TEST_SPECS / "gated.yaml", TEST_SPECS / "gated_steps.py"]
WORKER_ARGS = ("--lease-seconds", "2")
#: Upper bound for one test, so a lost run fails instead of hanging.
TEST_SECONDS = 90.0


@pytest.fixture
def running(postgres_server_url: str, tmp_path: Path) -> Iterator[Cluster]:
    """``plait serve --no-workers`` and one ``plait worker`` with a short lease."""
    with fresh_cluster(
        postgres_server_url,
        tmp_path / "cluster",
        SOURCES,
        serve_args=["--no-workers"],
        workers=1,
        worker_args=WORKER_ARGS,
    ) as started:
        yield started


@pytest.mark.parametrize("finished", range(len(STEPS)), ids=lambda n: f"after-{n}-steps")
async def test_a_worker_killed_at_a_step_boundary_loses_and_repeats_nothing(
    running: Cluster, tmp_path: Path, finished: int
) -> None:
    log, gates = tmp_path / "log", open_gates(tmp_path / "gates", STEPS[:finished])
    async with (
        asyncio.timeout(TEST_SECONDS),
        get_client(url=running.url, api_key=None) as client,
    ):
        thread = await client.threads.create()
        run = await client.runs.create(
            thread["thread_id"], "gated", input={"log": str(log), "gates": str(gates)}
        )
        for node in STEPS[finished]:
            await file_appears(gates / f"{node}.started")
        for worker in running.workers:
            worker.kill()
        running.start("worker-next", "worker", "--specs", str(running.specs_dir), *WORKER_ARGS)
        for node in NODES:
            (gates / node).touch()
        await client.runs.join(thread["thread_id"], run["run_id"])
        ended = await client.runs.get(thread["thread_id"], run["run_id"])
        state = await client.threads.get_state(thread["thread_id"])

    assert ended["status"] == "success"
    # Every node's side effect happened exactly once, across both workers.
    assert sorted(log.read_text().split()) == sorted(NODES)
    assert sorted(state["values"]["steps"]) == sorted(NODES)
