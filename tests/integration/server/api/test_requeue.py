"""``POST /threads/{tid}/runs/{rid}/requeue`` refuses what is not a dead letter; runs show
``plait_status`` and ``dead_letter`` (the dead letter itself: multiprocess/test_poison_runs.py)."""

from __future__ import annotations

import uuid

import httpx

from tests.integration.server.api.conftest import SUMMARY_INPUT, assert_problem, new_thread

RUN = {"assistant_id": "summarize", "input": SUMMARY_INPUT}


async def test_only_dead_lettered_runs_are_requeued(idle_client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(idle_client)
    run = (await idle_client.post(f"/threads/{thread_id}/runs", json=RUN)).json()
    assert (run["status"], run["plait_status"], run["dead_letter"]) == ("pending", "pending", None)
    listed = (await idle_client.get(f"/threads/{thread_id}/runs")).json()
    assert [(r["plait_status"], r["dead_letter"]) for r in listed] == [("pending", None)]

    refused = await idle_client.post(f"/threads/{thread_id}/runs/{run['run_id']}/requeue")
    body = assert_problem(refused, 409)
    assert body["type"] == "urn:plait:problem:run-not-dead-lettered"
    assert "pending, not dead-lettered" in body["detail"]

    missing = await idle_client.post(f"/threads/{thread_id}/runs/{uuid.uuid4()}/requeue")
    assert_problem(missing, 404)
    other_thread = await new_thread(idle_client)
    elsewhere = await idle_client.post(f"/threads/{other_thread}/runs/{run['run_id']}/requeue")
    assert_problem(elsewhere, 404)
