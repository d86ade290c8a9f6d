"""``GET /threads/{id}/recording``: a server thread's runs as a recording that replays."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx

from plait.engine.compiler import compile_spec
from plait.engine.run import Recording, counting_usage, replay_recording
from plait.engine.spec import load_directory, load_spec
from plait.engine.store import open_pool
from tests.integration.server.api.conftest import REFUND_HIGH, assert_problem, new_thread


async def test_a_parked_and_approved_thread_records_and_replays(
    client: httpx.AsyncClient, database_url: str, specs_dir: Path
) -> None:
    thread_id = await new_thread(client)
    body = {"assistant_id": "refund-approval", "input": REFUND_HIGH}
    parked = await client.post(f"/threads/{thread_id}/runs/wait", json=body)
    assert parked.json()["__interrupt__"]
    decision = {"decision": "approve", "comment": "Photos confirm the damage."}
    resume = {"assistant_id": "refund-approval", "command": {"resume": decision}}
    done = await client.post(f"/threads/{thread_id}/runs/wait", json=resume)
    assert done.json()["refund"]["status"] == "issued"

    answer = await client.get(f"/threads/{thread_id}/recording")

    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["format"] == "plait-recording/v1"
    assert (data["graph"], data["version"], data["thread_id"]) == (
        "refund-approval",
        "1.0.0",
        thread_id,
    )
    assert data["input"] == REFUND_HIGH
    assert data["decisions"] == [decision]
    assert data["expected"]["steps"] == ["assess", "approve", "refund"]
    assert data["expected"]["outcome"] == "success"
    [refund] = data["tool_calls"]
    assert refund["tool"] == "issue_refund" and refund["result"]["status"] == "issued"

    loaded = load_spec(specs_dir / "refund-approval.yaml")
    registry = load_directory(specs_dir)
    async with await open_pool(database_url, max_size=2) as pool:
        with counting_usage():
            replayed = await replay_recording(
                loaded, lambda spec: compile_spec(spec, registry), pool, Recording.from_json(data)
            )
    assert replayed.changes == [] and not replayed.failed
    assert replayed.unused == (0, 0, 0)  # the recorded refund was given back, not paid again


async def test_what_cannot_be_recorded_says_why(client: httpx.AsyncClient) -> None:
    unknown = await client.get(f"/threads/{uuid.uuid4()}/recording")
    assert_problem(unknown, 404)

    idle = await new_thread(client)
    never_ran = assert_problem(await client.get(f"/threads/{idle}/recording"), 409)
    assert never_ran["type"].endswith("recording-incomplete")
    assert "has not run yet" in never_ran["detail"]

    thread_id = await new_thread(client)
    body = {"assistant_id": "summarize", "input": {"text": "I was charged twice."}}
    assert (await client.post(f"/threads/{thread_id}/runs/wait", json=body)).status_code == 200
    unaudited = assert_problem(await client.get(f"/threads/{thread_id}/recording"), 409)
    assert "kept no model replies: set `audit: {model_calls: true}`" in unaudited["detail"]
