"""``plait worker --health-port``: the liveness endpoint the worker Deployment probes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest

from plait.server.cli.worker_health import WorkerHealth


@pytest.fixture
def health() -> Iterator[tuple[WorkerHealth, str]]:
    """A served :class:`WorkerHealth` on a free local port; (health, base URL)."""
    served = WorkerHealth(stale_after=10.0)
    port = served.serve("127.0.0.1", 0)
    try:
        yield served, f"http://127.0.0.1:{port}"
    finally:
        served.close()


def test_healthz_is_ok_while_the_loop_ticks(health: tuple[WorkerHealth, str]) -> None:
    _, base = health
    response = httpx.get(f"{base}/healthz", timeout=5)
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_healthz_fails_when_the_loop_stops_ticking(health: tuple[WorkerHealth, str]) -> None:
    served, base = health
    served._last_tick = time.monotonic() - 60  # as if the loop had been stuck for a minute
    response = httpx.get(f"{base}/healthz", timeout=5)
    assert response.status_code == 503
    assert response.json()["status"] == "stuck"


async def test_ticking_makes_it_healthy_again(health: tuple[WorkerHealth, str]) -> None:
    served, base = health
    served._last_tick = time.monotonic() - 60
    ticking = asyncio.create_task(served.tick_forever())
    await asyncio.sleep(0)  # one turn of the loop: the first tick
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            assert (await http.get(f"{base}/healthz")).status_code == 200
    finally:
        ticking.cancel()


def test_other_paths_are_not_found(health: tuple[WorkerHealth, str]) -> None:
    _, base = health
    assert httpx.get(f"{base}/metrics", timeout=5).status_code == 404
