"""Runs with a worker: SSE framing, wait, join, rejoin with Last-Event-ID, interrupts, errors."""

from __future__ import annotations

import uuid

import httpx

from tests.integration.server.api.conftest import (
    REFUND_HIGH,
    SUMMARY_INPUT,
    assert_problem,
    new_thread,
    parse_sse,
)


async def test_stream_frames_ids_and_locations(client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(client)
    response = await client.post(
        f"/threads/{thread_id}/runs/stream",
        json={
            "assistant_id": "summarize",
            "input": SUMMARY_INPUT,
            "stream_mode": ["values", "updates"],
        },
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    frames, _ = parse_sse(response.text)
    run_id = frames[0].data["run_id"]
    base = f"/threads/{thread_id}/runs/{run_id}"
    assert response.headers["Content-Location"] == base
    assert response.headers["Location"] == f"{base}/stream"

    assert frames[0].event == "metadata"
    assert frames[-1].event == "end"
    assert [int(frame.id or 0) for frame in frames] == list(range(1, len(frames) + 1))
    assert {frame.event for frame in frames[1:-1]} == {"values", "updates"}
    updates = [frame.data for frame in frames if frame.event == "updates"]
    assert [next(iter(update)) for update in updates] == ["clean", "summarize"]
    last_values = [frame.data for frame in frames if frame.event == "values"][-1]
    assert last_values["summary"].startswith("The customer was charged twice")

    run = (await client.get(base)).json()
    assert run["status"] == "success"
    assert run["kwargs"]["stream_mode"] == ["values", "updates"]

    # Rejoin after event 3: the rest, none repeated; stream_mode narrows the events.
    rest = await client.get(f"{base}/stream", headers={"Last-Event-ID": "3"})
    rest_frames, _ = parse_sse(rest.text)
    assert [frame.id for frame in rest_frames] == [frame.id for frame in frames[3:]]
    assert [frame.data for frame in rest_frames] == [frame.data for frame in frames[3:]]
    only_updates = await client.get(f"{base}/stream", params={"stream_mode": "updates"})
    names = [frame.event for frame in parse_sse(only_updates.text)[0]]
    assert names == ["metadata", "updates", "updates", "end"]
    # The SDK's join_stream sends an empty stream_mode when given none: every event.
    every = await client.get(f"{base}/stream", params={"stream_mode": ""})
    assert len(parse_sse(every.text)[0]) == len(frames)
    bad = await client.get(f"{base}/stream", headers={"Last-Event-ID": "abc"})
    assert_problem(bad, 422)

    events = (await client.get(f"/runs/{run_id}/events", params={"after": 5})).json()
    assert [event["seq"] for event in events] == list(range(6, len(frames) + 1))
    assert events[-1]["event"] == "end"
    assert_problem(await client.get(f"/runs/{uuid.uuid4()}/events"), 404)


async def test_background_run_join_list_get_delete(client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(client)
    created = await client.post(
        f"/threads/{thread_id}/runs", json={"assistant_id": "summarize", "input": SUMMARY_INPUT}
    )
    run = created.json()
    assert run["status"] in ("pending", "running", "success")
    assert run["thread_id"] == thread_id
    assert created.headers["Content-Location"] == f"/threads/{thread_id}/runs/{run['run_id']}"
    base = f"/threads/{thread_id}/runs/{run['run_id']}"

    joined = await client.get(f"{base}/join")
    assert joined.json()["summary"].startswith("The customer was charged twice")
    assert (await client.get(base)).json()["status"] == "success"
    listed = (await client.get(f"/threads/{thread_id}/runs")).json()
    assert [item["run_id"] for item in listed] == [run["run_id"]]
    assert (await client.get(f"/threads/{thread_id}/runs", params={"status": "error"})).json() == []

    assert (await client.delete(base)).status_code == 204
    assert_problem(await client.get(base), 404)
    assert_problem(await client.get(f"{base}/join"), 404)
    assert_problem(await client.delete(base), 404)
    assert_problem(await client.get(f"/threads/{uuid.uuid4()}/runs"), 404)


async def test_interrupt_then_resume_with_command(client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(client)
    waited = await client.post(
        f"/threads/{thread_id}/runs/wait",
        json={"assistant_id": "refund-approval", "input": REFUND_HIGH},
    )
    values = waited.json()
    assert values["assessment"]["risk"] == "high"
    [interrupt] = values["__interrupt__"]
    assert interrupt["value"]["action"] == "issue_refund"

    thread = (await client.get(f"/threads/{thread_id}")).json()
    assert thread["status"] == "interrupted"
    assert [item["id"] for items in thread["interrupts"].values() for item in items] == [
        interrupt["id"]
    ]
    state = (await client.get(f"/threads/{thread_id}/state")).json()
    assert state["next"] == ["approve"]
    assert state["interrupts"][0]["id"] == interrupt["id"]

    resumed = await client.post(
        f"/threads/{thread_id}/runs/stream",
        json={
            "assistant_id": "refund-approval",
            "command": {"resume": {interrupt["id"]: {"decision": "approve"}}},
            "stream_mode": "values",
        },
    )
    frames, _ = parse_sse(resumed.text)
    final = [frame.data for frame in frames if frame.event == "values"][-1]
    assert final["outcome"].startswith("refunded 180")
    assert (await client.get(f"/threads/{thread_id}")).json()["status"] == "idle"


async def test_failed_run_streams_error_then_end(client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(client)
    failing = {"assistant_id": "refund-approval", "input": {**REFUND_HIGH, "order_id": "Z-9"}}
    response = await client.post(f"/threads/{thread_id}/runs/stream", json=failing)
    assert response.status_code == 200
    frames, _ = parse_sse(response.text)
    assert [frame.event for frame in frames[-2:]] == ["error", "end"]
    assert "Z-9" in frames[-2].data["message"]

    waited = await client.post(f"/threads/{thread_id}/runs/wait", json=failing)
    assert "Z-9" in waited.json()["__error__"]["message"]


async def test_stateless_runs_use_a_temporary_thread(client: httpx.AsyncClient) -> None:
    waited = await client.post(
        "/runs/wait", json={"assistant_id": "summarize", "input": SUMMARY_INPUT}
    )
    assert waited.json()["summary"].startswith("The customer was charged twice")
    thread_id = waited.headers["Content-Location"].split("/")[2]
    assert_problem(await client.get(f"/threads/{thread_id}"), 404)  # deleted on completion

    kept = await client.post(
        "/runs/stream",
        json={"assistant_id": "summarize", "input": SUMMARY_INPUT, "on_completion": "keep"},
    )
    frames, _ = parse_sse(kept.text)
    assert frames[-1].event == "end"
    kept_thread = kept.headers["Content-Location"].split("/")[2]
    thread = (await client.get(f"/threads/{kept_thread}")).json()
    assert thread["values"]["summary"].startswith("The customer was charged twice")


async def test_run_request_errors(client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(client)
    missing = await client.post(f"/threads/{thread_id}/runs", json={"input": {}})
    body = assert_problem(missing, 422)
    assert ["body", "assistant_id"] in [error["loc"] for error in body["errors"]]
    unknown = await client.post(f"/threads/{thread_id}/runs", json={"assistant_id": "nope"})
    assert_problem(unknown, 404)
    ghost = str(uuid.uuid4())
    no_thread = await client.post(
        f"/threads/{ghost}/runs/wait", json={"assistant_id": "summarize", "input": SUMMARY_INPUT}
    )
    assert ghost in assert_problem(no_thread, 404)["detail"]
    created = await client.post(
        f"/threads/{ghost}/runs/wait",
        json={"assistant_id": "summarize", "input": SUMMARY_INPUT, "if_not_exists": "create"},
    )
    assert created.json()["summary"]
    other_graph = await client.post(
        f"/threads/{ghost}/runs", json={"assistant_id": "refund-approval", "input": REFUND_HIGH}
    )
    assert_problem(other_graph, 409)


async def test_a_retried_stateless_wait_with_a_key_gets_the_first_run(
    client: httpx.AsyncClient,
) -> None:
    headers = {"Idempotency-Key": f"stateless-wait-{uuid.uuid4()}"}
    body = {"assistant_id": "summarize", "input": SUMMARY_INPUT}

    first = await client.post("/runs/wait", json=body, headers=headers)
    again = await client.post("/runs/wait", json=body, headers=headers)

    assert first.status_code == again.status_code == 200
    # The thread outlives the run (default on_completion=delete) so the key still finds it.
    assert first.headers["Content-Location"] == again.headers["Content-Location"]
    assert again.json()["summary"] == first.json()["summary"]


async def test_values_postgres_cannot_store_are_422_problems(client: httpx.AsyncClient) -> None:
    created = await client.post("/threads", json={"metadata": {"note": "a\u0000b"}})
    assert_problem(created, 422)
    assert_problem(await client.get("/threads/a%00b"), 422)


async def test_clients_cannot_set_the_servers_plait_keys(client: httpx.AsyncClient) -> None:
    body = {"assistant_id": "summarize", "input": SUMMARY_INPUT}
    spoofed = await client.post(
        "/runs/wait", json={**body, "metadata": {"plait_tenant": "other", "team": "a"}}
    )
    problem = assert_problem(spoofed, 422)
    assert "plait_tenant" in problem["detail"] and "set by the server" in problem["detail"]
    configured = await client.post(
        "/runs/wait", json={**body, "config": {"configurable": {"plait_actor": "ceo"}}}
    )
    assert "plait_actor" in assert_problem(configured, 422)["detail"]
    # Keys of the client's own are kept.
    kept = await client.post("/runs/wait", json={**body, "metadata": {"team": "a"}})
    assert kept.status_code == 200, kept.text
