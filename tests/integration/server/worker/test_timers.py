"""Durable timers on real Postgres: `wait` nodes and approvals' expiry, with two workers.

The API (a worker-less app on this package's database) is what the tests read;
the workers run in this event loop so a test can stop every one of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families

from plait.engine.store.pool import Pool
from plait.server.queue import timers
from plait.server.workers.timer_firer import TimerFirer
from plait.server.workers.worker import Worker
from tests.integration.server.harness import client_of, running_app
from tests.integration.server.worker.conftest import SPECS_DIR, calls, running_worker
from tests.polling import until

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
async def api_app(worker_database_url: str, wpool: Pool) -> AsyncIterator[FastAPI]:
    """The API with no worker of its own: the tests' workers are the only ones."""
    async with running_app(worker_database_url, SPECS_DIR, workers=0) as application:
        yield application


@pytest.fixture
async def api(api_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with client_of(api_app) as http:
        yield http


async def start_run(api: httpx.AsyncClient, graph: str, **input: Any) -> dict[str, Any]:
    """A background run of ``graph`` on a new thread, through the API."""
    thread = await api.post("/threads", json={})
    assert thread.status_code == 200, thread.text
    response = await api.post(
        f"/threads/{thread.json()['thread_id']}/runs",
        json={"assistant_id": graph, "input": input},
    )
    assert response.status_code == 200, response.text
    run: dict[str, Any] = response.json()
    return run


async def run_in_state(api: httpx.AsyncClient, run: dict[str, Any], *states: str) -> dict[str, Any]:
    """Poll the API until the run's ``plait_state`` is one of ``states``; return its JSON."""

    async def check() -> dict[str, Any] | None:
        response = await api.get(f"/threads/{run['thread_id']}/runs/{run['run_id']}")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body if body["plait_state"] in states else None

    found: dict[str, Any] = await until(check, f"run {run['run_id']} to be {' or '.join(states)}")
    return found


async def runs_of(api: httpx.AsyncClient, thread_id: str) -> list[dict[str, Any]]:
    response = await api.get(f"/threads/{thread_id}/runs")
    assert response.status_code == 200, response.text
    listed: list[dict[str, Any]] = response.json()
    return listed


async def resume_run(api: httpx.AsyncClient, parked: dict[str, Any]) -> dict[str, Any]:
    """The run that resumed ``parked``'s thread, once it succeeded (the thread's newest)."""

    async def check() -> dict[str, Any] | None:
        later = [
            r for r in await runs_of(api, parked["thread_id"]) if r["run_id"] != parked["run_id"]
        ]
        return later[0] if later and later[0]["plait_state"] == "succeeded" else None

    found: dict[str, Any] = await until(check, f"the thread of {parked['run_id']} to go on")
    return found


async def metric(api: httpx.AsyncClient, name: str, **labels: str) -> float:
    """The value of one sample of ``GET /metrics`` (0 when it is not there)."""
    response = await api.get("/metrics")
    assert response.status_code == 200, response.text
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


async def two_workers(pool: Pool, stack: AsyncExitStack) -> list[Worker]:
    return [await stack.enter_async_context(running_worker(pool)) for _ in range(2)]


async def test_a_wait_parks_without_a_worker_and_one_of_two_workers_resumes_it(
    api: httpx.AsyncClient, wpool: Pool, tmp_path: Path
) -> None:
    async with AsyncExitStack() as stack:
        workers = await two_workers(wpool, stack)
        run = await start_run(api, "worker-wait", folder=str(tmp_path))

        async def parked_and_idle() -> dict[str, Any] | None:
            parked = await run_in_state(api, run, "waiting_for_timer", "succeeded")
            idle = all(not worker.active_runs for worker in workers)
            return parked if idle else None

        # While it waits it holds no worker: both are idle with the run parked.
        parked = await until(parked_and_idle, "the run parked and both workers idle")
        assert parked["plait_state"] == "waiting_for_timer"
        assert parked["status"] == "success"  # what the Agent Server says of a parked run
        until_at = parked["plait_state_detail"]["waiting"]["until"]
        assert parked["plait_state_detail"]["waiting"]["nodes"] == ["pause"]
        assert parked["plait_state_label"] == f"waiting until {until_at}"
        state = (await api.get(f"/threads/{run['thread_id']}/state")).json()
        [interrupt] = state["interrupts"]
        assert interrupt["value"] == {"kind": "wait", "node": "pause", "until": until_at}
        assert await metric(api, "plait_timers_pending", kind="wait") >= 1

        resumed = await resume_run(api, parked)

    due_at = datetime.fromisoformat(until_at)
    [timer] = await timers.timers_of_run(wpool, run["run_id"])
    assert (timer.status, timer.kind, timer.resume_run_id) == ("fired", "wait", resumed["run_id"])
    assert timer.fired_at is not None and timer.fired_at >= due_at
    assert datetime.fromisoformat(resumed["created_at"]) >= due_at
    # Exactly one resume across both workers: the parked run and its one successor.
    assert len(await runs_of(api, run["thread_id"])) == 2
    assert resumed["metadata"]["plait_timer"]["node"] == "pause"
    assert calls(tmp_path) == ["prepare", "done"]
    values = (await api.get(f"/threads/{run['thread_id']}/state")).json()["values"]
    assert values["waited"] == {"until": until_at, "by": "timer"}
    settled = await run_in_state(api, run, "succeeded")
    assert settled["plait_state_detail"] is None
    assert await metric(api, "plait_timers_fired_total", kind="wait") >= 1
    assert await metric(api, "plait_timer_lateness_seconds_count", kind="wait") >= 1


async def test_a_timer_survives_a_restart_of_every_worker(
    api: httpx.AsyncClient, wpool: Pool, tmp_path: Path
) -> None:
    # Far enough ahead for the run to park first (a time already past does not park).
    wake_at = datetime.now(UTC) + timedelta(seconds=4)
    async with AsyncExitStack() as stack:
        await two_workers(wpool, stack)
        run = await start_run(
            api, "worker-wait-until", folder=str(tmp_path), wake_at=wake_at.isoformat()
        )
        parked = await run_in_state(api, run, "waiting_for_timer", "succeeded")
        assert parked["plait_state"] == "waiting_for_timer"
    # Every worker stopped. The due time passes with none running: nothing fires it.

    async def past_due() -> bool:
        return datetime.now(UTC) > wake_at

    await until(past_due, "the timer's time to pass")
    [timer] = await timers.timers_of_run(wpool, run["run_id"])
    assert timer.status == "pending"

    async with running_worker(wpool):
        resumed = await resume_run(api, parked)

    [timer] = await timers.timers_of_run(wpool, run["run_id"])
    assert (timer.status, timer.resume_run_id) == ("fired", resumed["run_id"])
    assert len(await runs_of(api, run["thread_id"])) == 2
    assert calls(tmp_path) == ["done"]


async def test_two_firers_racing_for_a_due_timer_fire_it_once(
    api: httpx.AsyncClient, wpool: Pool, tmp_path: Path
) -> None:
    # Far enough ahead for the run to park first (a time already past does not park).
    wake_at = datetime.now(UTC) + timedelta(seconds=2)
    async with running_worker(wpool):
        run = await start_run(
            api, "worker-wait-until", folder=str(tmp_path), wake_at=wake_at.isoformat()
        )
        parked = await run_in_state(api, run, "waiting_for_timer", "succeeded")
        assert parked["plait_state"] == "waiting_for_timer"

    async def due() -> bool:
        return any(t.run_id == run["run_id"] for t in await timers.due(wpool, 100))

    await until(due, "the timer to be due")
    # Two workers' firers at the same moment: the thread's lock lets one fire it.
    fired = await asyncio.gather(TimerFirer(wpool).fire_due(), TimerFirer(wpool).fire_due())
    assert sum(fired) == 1
    [timer] = await timers.timers_of_run(wpool, run["run_id"])
    assert timer.status == "fired" and timer.resume_run_id is not None
    assert len(await runs_of(api, run["thread_id"])) == 2
    async with running_worker(wpool):
        resumed = await resume_run(api, parked)
    assert resumed["run_id"] == timer.resume_run_id
    assert calls(tmp_path) == ["done"]


async def test_a_persons_early_resume_cancels_the_timer(
    api: httpx.AsyncClient, wpool: Pool, tmp_path: Path
) -> None:
    wake_at = datetime.now(UTC) + timedelta(hours=1)
    async with AsyncExitStack() as stack:
        await two_workers(wpool, stack)
        run = await start_run(
            api, "worker-wait-until", folder=str(tmp_path), wake_at=wake_at.isoformat()
        )
        await run_in_state(api, run, "waiting_for_timer")
        response = await api.post(
            f"/threads/{run['thread_id']}/runs",
            json={"assistant_id": "worker-wait-until", "command": {"resume": "go now"}},
        )
        assert response.status_code == 200, response.text
        resumed = await resume_run(api, run)

    assert resumed["run_id"] == response.json()["run_id"]
    [timer] = await timers.timers_of_run(wpool, run["run_id"])
    assert (timer.status, timer.resume_run_id) == ("cancelled", None)
    values = (await api.get(f"/threads/{run['thread_id']}/state")).json()["values"]
    assert values["waited"] == {"until": wake_at.isoformat(), "by": "person", "value": "go now"}
    assert calls(tmp_path) == ["done"]


async def test_cancelling_a_waiting_run_cancels_its_timer(
    api: httpx.AsyncClient, wpool: Pool, tmp_path: Path
) -> None:
    wake_at = datetime.now(UTC) + timedelta(hours=1)
    async with running_worker(wpool):
        run = await start_run(
            api, "worker-wait-until", folder=str(tmp_path), wake_at=wake_at.isoformat()
        )
        await run_in_state(api, run, "waiting_for_timer")

    response = await api.post(f"/threads/{run['thread_id']}/runs/{run['run_id']}/cancel")
    assert response.status_code in (200, 202, 204), response.text
    cancelled = await run_in_state(api, run, "cancelled")
    assert cancelled["status"] == "interrupted"
    [timer] = await timers.timers_of_run(wpool, run["run_id"])
    assert timer.status == "cancelled"


async def test_an_approval_with_expires_in_expires_on_its_own(
    api: httpx.AsyncClient, wpool: Pool, tmp_path: Path
) -> None:
    async with AsyncExitStack() as stack:
        await two_workers(wpool, stack)
        run = await start_run(api, "worker-expiring", folder=str(tmp_path))
        parked = await run_in_state(api, run, "waiting_for_person", "succeeded")
        resumed = await resume_run(api, parked)

    response = await api.get(
        "/approvals", params={"thread_id": run["thread_id"], "status": "decided"}
    )
    assert response.status_code == 200, response.text
    [approval] = response.json()
    assert (approval["status"], approval["decided_by"]) == ("expired", "plait:expiry")
    assert approval["resume_run_id"] == resumed["run_id"]
    [timer] = await timers.timers_of_run(wpool, run["run_id"])
    assert (timer.kind, timer.status) == ("approval_expiry", "fired")
    assert timer.fired_at is not None and timer.fired_at >= datetime.fromisoformat(
        approval["expires_at"]
    )
    assert len(await runs_of(api, run["thread_id"])) == 2
    assert calls(tmp_path) == ["prepare", "declined"]  # on_expire: reject
