"""Threads and their state: create, get, patch, search, delete; state, history, updates."""

from __future__ import annotations

import uuid

import httpx

from tests.integration.server.api.conftest import (
    SUMMARY_INPUT,
    assert_problem,
    new_thread,
)


async def test_thread_lifecycle(client: httpx.AsyncClient) -> None:
    thread_id = str(uuid.uuid4())
    marker = uuid.uuid4().hex
    created = await client.post(
        "/threads", json={"thread_id": thread_id, "metadata": {"marker": marker}}
    )
    thread = created.json()
    assert thread["thread_id"] == thread_id
    assert thread["status"] == "idle"
    assert thread["values"] == {} and thread["interrupts"] == {}

    body = assert_problem(await client.post("/threads", json={"thread_id": thread_id}), 409)
    assert thread_id in body["detail"]
    kept = await client.post("/threads", json={"thread_id": thread_id, "if_exists": "do_nothing"})
    assert kept.json()["metadata"] == {"marker": marker}

    patched = await client.patch(f"/threads/{thread_id}", json={"metadata": {"team": "a"}})
    assert patched.json()["metadata"] == {"marker": marker, "team": "a"}
    found = await client.post("/threads/search", json={"metadata": {"marker": marker}})
    assert [item["thread_id"] for item in found.json()] == [thread_id]
    idle = await client.post(
        "/threads/search", json={"metadata": {"marker": marker}, "status": "busy"}
    )
    assert idle.json() == []

    deleted = await client.delete(f"/threads/{thread_id}")
    assert deleted.status_code == 204
    assert_problem(await client.get(f"/threads/{thread_id}"), 404)
    assert_problem(await client.delete(f"/threads/{thread_id}"), 404)
    assert_problem(await client.patch(f"/threads/{thread_id}", json={"metadata": {}}), 404)


async def test_state_of_a_thread_without_runs_is_empty(client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(client)
    state = (await client.get(f"/threads/{thread_id}/state")).json()
    assert state["values"] == {} and state["next"] == [] and state["tasks"] == []
    assert state["checkpoint"]["thread_id"] == thread_id
    assert state["checkpoint"]["checkpoint_id"] is None
    history = await client.post(f"/threads/{thread_id}/history", json={})
    assert history.json() == []
    update = await client.post(f"/threads/{thread_id}/state", json={"values": {"text": "x"}})
    assert "no graph" in assert_problem(update, 409)["detail"]
    assert_problem(await client.get(f"/threads/{uuid.uuid4()}/state"), 404)


async def test_state_history_checkpoints_and_updates(client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(client)
    run = await client.post(
        f"/threads/{thread_id}/runs/wait",
        json={"assistant_id": "summarize", "input": SUMMARY_INPUT},
    )
    assert run.status_code == 200, run.text

    thread = (await client.get(f"/threads/{thread_id}")).json()
    assert thread["values"]["summary"].startswith("The customer was charged twice")
    assert thread["status"] == "idle"

    state = (await client.get(f"/threads/{thread_id}/state")).json()
    assert state["next"] == []
    assert state["metadata"]["plait_graph"] == "summarize"
    assert state["parent_checkpoint"] is not None

    history = (await client.post(f"/threads/{thread_id}/history", json={"limit": 10})).json()
    assert history[0]["checkpoint"] == state["checkpoint"]
    assert history[-1]["values"].get("summary") is None  # the oldest comes last
    assert len(history) >= 3
    two = (await client.post(f"/threads/{thread_id}/history", json={"limit": 2})).json()
    assert two == history[:2]
    older = await client.post(
        f"/threads/{thread_id}/history",
        json={"limit": 10, "before": state["checkpoint"]["checkpoint_id"]},
    )
    assert older.json() == history[1:]

    earlier = history[1]["checkpoint"]["checkpoint_id"]
    at = (await client.get(f"/threads/{thread_id}/state/{earlier}")).json()
    assert at["checkpoint"]["checkpoint_id"] == earlier
    assert at["values"] == history[1]["values"]
    by_body = await client.post(
        f"/threads/{thread_id}/state/checkpoint",
        json={"checkpoint": {"checkpoint_id": earlier}},
    )
    assert by_body.json()["values"] == at["values"]
    assert_problem(await client.get(f"/threads/{thread_id}/state/{uuid.uuid4()}"), 404)

    updated = await client.post(
        f"/threads/{thread_id}/state",
        json={"values": {"summary": "Edited by a person."}, "as_node": "summarize"},
    )
    assert updated.status_code == 200, updated.text
    new_checkpoint = updated.json()["checkpoint"]
    assert new_checkpoint["checkpoint_id"] != state["checkpoint"]["checkpoint_id"]
    after = (await client.get(f"/threads/{thread_id}/state")).json()
    assert after["values"]["summary"] == "Edited by a person."
    assert after["checkpoint"] == new_checkpoint
    bad = await client.post(
        f"/threads/{thread_id}/state", json={"values": {"summary": "x"}, "as_node": "nowhere"}
    )
    assert_problem(bad, 422)


async def test_update_state_on_new_thread_uses_its_graph_id(client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(client, metadata={"graph_id": "summarize"})
    updated = await client.post(
        f"/threads/{thread_id}/state", json={"values": {"text": "hello"}, "as_node": "clean"}
    )
    assert updated.status_code == 200, updated.text
    state = (await client.get(f"/threads/{thread_id}/state")).json()
    assert state["values"]["text"] == "hello"
    assert state["next"] == ["summarize"]
