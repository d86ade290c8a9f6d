"""Run states say what happened: items a map lost, a retry while it waits, a person awaited.

Real Postgres, real :class:`Worker` s. The Agent Server ``status`` stays what
the SDKs know; Plait's ``plait_state`` beside it (engine/run/states.py) says more.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY

from plait.engine.store.pool import Pool
from plait.server.operations import metrics
from plait.server.queue import runs
from plait.server.queue.runs import Run
from tests.integration.killed_runs import worker_dies_mid_node
from tests.integration.server.worker.conftest import (
    calls,
    file_appears,
    new_run,
    run_reaches,
    running_worker,
)
from tests.polling import until

pytestmark = pytest.mark.postgres


async def _state_is(pool: Pool, run_id: str, state: str) -> Run:
    """Wait until the run shows ``state`` (as the API shows it); return it."""

    async def check() -> Run | None:
        run = await runs.get_run(pool, run_id)
        return run if run is not None and run.shown_state()[0] == state else None

    found: Run = await until(check, f"run {run_id} to be {state}")
    return found


def _ended(graph: str, state: str) -> float:
    value = REGISTRY.get_sample_value("plait_runs_ended_total", {"graph": graph, "state": state})
    return value or 0.0


async def _gauge(pool: Pool) -> dict[str, float]:
    family = next(m for m in await metrics.database_metrics(pool) if m.name == "plait_run_states")
    return {sample.labels["state"]: sample.value for sample in family.samples}


async def test_a_map_that_lost_items_ends_partially_succeeded_across_two_workers(
    wpool: Pool, tmp_path: Path
) -> None:
    """Worker A runs the map (3 of 5 items lost) and dies in the next step; while no worker
    has the run it shows as retrying; worker B continues it from its checkpoint (the map
    does not run again) and the run ends `success` for the SDK, partially succeeded in Plait."""
    items = ["a", "bad-1", "b", "bad-2", "bad-3"]
    run = await new_run(wpool, "worker-lossy", input={"folder": str(tmp_path), "items": items})
    ended = _ended("worker-lossy", "partially_succeeded")

    async def losses_recorded() -> None:
        # Worker A has written the map's losses to the run row (what B reads) before it dies.
        lost = await until(lambda: _lost_so_far(wpool, run.run_id), "the losses on the run row")
        assert lost == 3

    await worker_dies_mid_node(wpool, run.run_id, tmp_path / "two.started", also=losses_recorded)

    waiting = await runs.get_run(wpool, run.run_id)
    assert waiting is not None
    shown = waiting.to_api()
    assert (shown["status"], shown["plait_state"]) == ("running", "retrying")
    assert shown["plait_state_label"] == "retrying: worker lost (attempt 2)"
    assert (await _gauge(wpool))["retrying"] >= 1

    (tmp_path / "two.go").touch()
    async with running_worker(wpool, worker_id="worker-b"):
        done = await run_reaches(wpool, run.run_id, "success", "error")

    shown = done.to_api()
    assert (shown["status"], shown["plait_state"]) == ("success", "partially_succeeded")
    assert shown["plait_state_label"] == "partial: 3 of 5 items lost"
    [lossy] = shown["plait_state_detail"]["maps"]
    assert (lossy["node"], lossy["items"], lossy["lost"]) == ("fan", 5, 3)
    assert done.attempt == 2 and calls(tmp_path) == ["two", "two"]  # the map ran once
    assert _ended("worker-lossy", "partially_succeeded") == ended + 1


async def _lost_so_far(pool: Pool, run_id: str) -> int | None:
    run = await runs.get_run(pool, run_id)
    lost = (run.state_detail or {}).get("lost_items") if run is not None else None
    return lost if isinstance(lost, int) else None


async def test_a_call_that_backs_off_shows_retrying_then_running(
    wpool: Pool, tmp_path: Path
) -> None:
    run = await new_run(wpool, "worker-retry", input={"folder": str(tmp_path)})
    async with running_worker(wpool, worker_id="worker-r"):
        retrying = await _state_is(wpool, run.run_id, "retrying")
        detail: dict[str, Any] = retrying.state_detail or {}
        assert (retrying.status, detail["retry"]["target"]) == ("running", "tool:flaky")
        assert detail["retry"]["error_class"] == "network"
        assert retrying.to_api()["plait_state_label"] == "retrying tool:flaky (attempt 2)"

        # The second attempt runs (and waits at its gate): the run is running again.
        await file_appears(tmp_path / "flaky.started")
        running = await _state_is(wpool, run.run_id, "running")
        assert running.state_detail is None
        (tmp_path / "flaky.go").touch()
        done = await run_reaches(wpool, run.run_id, "success", "error")
    assert (done.status, done.state) == ("success", "succeeded")


async def test_a_run_parked_on_an_approval_waits_for_a_person_until_it_is_decided(
    wpool: Pool, tmp_path: Path
) -> None:
    run = await new_run(wpool, "worker-approval", input={"folder": str(tmp_path)})
    async with running_worker(wpool, worker_id="worker-p"):
        parked = await run_reaches(wpool, run.run_id, "success", "error")
        shown = parked.to_api()
        assert (shown["status"], shown["plait_state"]) == ("success", "waiting_for_person")
        assert shown["plait_state_label"] == "waiting for a person"
        assert (await _gauge(wpool))["waiting_for_person"] >= 1

        resume = await new_run(
            wpool,
            "worker-approval",
            thread_id=run.thread_id,
            command={"resume": {"decision": "approve"}},
        )
        # The thread moved on: the parked run no longer waits.
        settled = await runs.get_run(wpool, run.run_id)
        assert settled is not None and (settled.status, settled.state) == ("success", "succeeded")
        done = await run_reaches(wpool, resume.run_id, "success", "error")
    assert done.state == "succeeded"
