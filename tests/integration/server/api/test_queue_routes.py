"""Routes over the queue with no worker running, so runs stay pending: multitask
strategies, cancel, and Idempotency-Key."""

from __future__ import annotations

import asyncio

import httpx

from tests.integration.server.api.conftest import (
    SUMMARY_INPUT,
    assert_problem,
    new_thread,
    parse_sse,
)

RUN = {"assistant_id": "summarize", "input": SUMMARY_INPUT}


async def test_reject_strategy_is_409_while_a_run_is_active(idle_client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(idle_client)
    first = (await idle_client.post(f"/threads/{thread_id}/runs", json=RUN)).json()
    assert first["status"] == "pending"
    busy = await idle_client.post(
        f"/threads/{thread_id}/runs", json={**RUN, "multitask_strategy": "reject"}
    )
    body = assert_problem(busy, 409)
    assert first["run_id"] in body["detail"]
    queued = await idle_client.post(f"/threads/{thread_id}/runs", json=RUN)  # enqueue: default
    assert queued.json()["status"] == "pending"
    thread = (await idle_client.get(f"/threads/{thread_id}")).json()
    assert thread["status"] == "busy"
    active = await idle_client.delete(f"/threads/{thread_id}/runs/{first['run_id']}")
    assert_problem(active, 409)


async def test_cancel_pending_run(idle_client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(idle_client)
    run = (await idle_client.post(f"/threads/{thread_id}/runs", json=RUN)).json()
    base = f"/threads/{thread_id}/runs/{run['run_id']}"
    cancelled = await idle_client.post(f"{base}/cancel", params={"wait": 1, "action": "interrupt"})
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "interrupted"
    # A cancelled run's stream ends cleanly; joining returns at once.
    frames, _ = parse_sse((await idle_client.get(f"{base}/stream")).text)
    assert frames[-1].event == "end"
    assert (await idle_client.get(f"{base}/join")).status_code == 200
    again = await idle_client.post(f"{base}/cancel")
    assert again.status_code == 202 and again.json()["status"] == "interrupted"

    other = (await idle_client.post(f"/threads/{thread_id}/runs", json=RUN)).json()
    rolled = await idle_client.post(
        f"/threads/{thread_id}/runs/{other['run_id']}/cancel", params={"action": "rollback"}
    )
    assert rolled.status_code == 202
    assert_problem(await idle_client.get(f"/threads/{thread_id}/runs/{other['run_id']}"), 404)
    bad = await idle_client.post(f"{base}/cancel", params={"action": "explode"})
    assert_problem(bad, 422)
    assert_problem(await idle_client.post(f"/threads/{thread_id}/runs/nope/cancel"), 404)


async def test_idempotency_key_returns_the_same_run(idle_client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(idle_client)
    path = f"/threads/{thread_id}/runs"
    headers = {"Idempotency-Key": f"key-{thread_id}"}
    first, second = await asyncio.gather(
        idle_client.post(path, json=RUN, headers=headers),
        idle_client.post(path, json=RUN, headers=headers),
    )
    assert first.status_code == second.status_code == 200
    assert first.json()["run_id"] == second.json()["run_id"]
    # Key order does not change the body's hash.
    reordered = {"input": SUMMARY_INPUT, "assistant_id": "summarize"}
    third = await idle_client.post(path, json=reordered, headers=headers)
    assert third.json()["run_id"] == first.json()["run_id"]
    runs = (await idle_client.get(path)).json()
    assert [run["run_id"] for run in runs] == [first.json()["run_id"]]

    other_body = {**RUN, "input": {"text": "something else"}}
    body = assert_problem(await idle_client.post(path, json=other_body, headers=headers), 422)
    assert headers["Idempotency-Key"] in body["detail"]
    assert len((await idle_client.get(path)).json()) == 1

    # Stateless: the retry lands on the same temporary thread and run.
    stateless_headers = {"Idempotency-Key": f"stateless-{thread_id}"}
    one = await idle_client.post("/runs", json=RUN, headers=stateless_headers)
    two = await idle_client.post("/runs", json=RUN, headers=stateless_headers)
    assert one.json()["run_id"] == two.json()["run_id"]
    assert one.json()["thread_id"] == two.json()["thread_id"]
