"""Creating runs: the graph version is chosen while the thread is locked, in one round trip.

The API reads the assistant and the rollout on other pooled connections while
the creation holds its own under the thread's lock, so creations at once are
capped (``Services.creations``): a burst larger than the pool still goes through.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from tests.integration.server.api.conftest import SUMMARY_INPUT, assert_problem, new_thread
from tests.integration.server.harness import client_of, running_app

#: A pool this small, and no worker: every creation competes for three connections.
POOL = 3


@pytest.fixture(scope="module")
async def small_pool_app(database_url: str, specs_dir: Path) -> AsyncIterator[FastAPI]:
    """The app with a pool of :data:`POOL` connections and no worker (runs stay queued)."""
    async with running_app(database_url, specs_dir, workers=0, pool_max_size=POOL) as app:
        yield app


@pytest.fixture
async def small_pool_client(small_pool_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of the small-pool app."""
    async with client_of(small_pool_app) as http:
        yield http


async def test_a_burst_of_creations_larger_than_the_pool_goes_through(
    small_pool_client: httpx.AsyncClient,
) -> None:
    threads = [await new_thread(small_pool_client) for _ in range(10 * POOL)]

    async def create(thread_id: str) -> httpx.Response:
        return await small_pool_client.post(
            f"/threads/{thread_id}/runs",
            json={"assistant_id": "summarize", "input": SUMMARY_INPUT},
        )

    # Bounded well below the pool's own wait (30 s): a creation holding a connection
    # while its reads wait for one no creation gives back would stall every one.
    async with asyncio.timeout(20):
        responses = await asyncio.gather(*(create(thread_id) for thread_id in threads))
    assert [response.status_code for response in responses] == [200] * len(threads)
    runs = [response.json() for response in responses]
    assert [run["thread_id"] for run in runs] == threads
    assert {run["status"] for run in runs} == {"pending"}
    # Each thread recorded the graph version its run was created on.
    for thread_id, run in zip(threads, runs, strict=True):
        thread = (await small_pool_client.get(f"/threads/{thread_id}")).json()
        assert thread["metadata"]["graph_id"] == "summarize"
        assert thread["metadata"]["assistant_id"] == run["assistant_id"]


async def test_an_unknown_assistant_is_told_before_an_unknown_thread(
    small_pool_client: httpx.AsyncClient,
) -> None:
    missing = str(uuid.uuid4())
    body = {"assistant_id": "no-such-graph", "input": {}}
    both = assert_problem(await small_pool_client.post(f"/threads/{missing}/runs", json=body), 404)
    assert "assistant 'no-such-graph' not found" in both["detail"]

    known = {"assistant_id": "summarize", "input": SUMMARY_INPUT}
    thread = assert_problem(
        await small_pool_client.post(f"/threads/{missing}/runs", json=known), 404
    )
    assert f"thread {missing} not found" in thread["detail"]

    # Neither left anything behind: the thread can still be made and run.
    created = await small_pool_client.post(
        f"/threads/{missing}/runs", json={**known, "if_not_exists": "create"}
    )
    assert created.status_code == 200, created.text
    assert created.json()["thread_id"] == missing
