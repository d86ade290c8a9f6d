"""A run's priority and deadline over the API: the request fields, what the run shows,
an expired run's end for ``/wait`` and ``/join``, ``/metrics``, and bad input as problem
JSON (docs/decisions.md 91)."""

from __future__ import annotations

from datetime import datetime

import httpx
import pytest

from tests.integration.server.api.conftest import SUMMARY_INPUT, assert_problem, new_thread
from tests.integration.server.rollout.metrics_text import samples

BODY = {"assistant_id": "summarize", "input": SUMMARY_INPUT}


async def test_a_run_shows_its_priority_and_deadline(idle_client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(idle_client)
    body = {**BODY, "priority": 8, "expires_in": "10m", "after_seconds": 30}
    created = await idle_client.post(f"/threads/{thread_id}/runs", json=body)
    assert created.status_code == 200, created.text
    run = created.json()
    assert run["plait_priority"] == 8
    deadline = datetime.fromisoformat(run["plait_expires_at"])
    created_at = datetime.fromisoformat(run["created_at"])
    # Counted from when the run may start (after_seconds), not from its creation.
    assert abs((deadline - created_at).total_seconds() - (30 + 600)) < 1
    shown = (await idle_client.get(f"/threads/{thread_id}/runs/{run['run_id']}")).json()
    assert (shown["plait_priority"], shown["plait_expires_at"]) == (8, run["plait_expires_at"])
    # Neither said: priority 5 (summarize has no `queue`), no deadline.
    other = await idle_client.post(f"/threads/{await new_thread(idle_client)}/runs", json=BODY)
    assert (other.json()["plait_priority"], other.json()["plait_expires_at"]) == (5, None)
    text = (await idle_client.get("/metrics")).text
    depth = {
        labels["priority"]: value
        for labels, value in samples(text, "plait_queue_depth_by_priority")
    }
    assert sorted(depth, key=int) == [str(level) for level in range(10)]
    assert depth["8"] >= 1


@pytest.mark.parametrize(
    ("fields", "where", "words"),
    [
        ({"priority": 10}, "priority", "less than or equal to 9"),
        ({"priority": -1}, "priority", "greater than or equal to 0"),
        ({"expires_at": "tomorrow"}, "expires_at", "datetime"),
        ({"expires_at": "2030-01-01T00:00:00"}, "expires_at", "timezone"),
        ({"expires_at": "2020-01-01T00:00:00Z"}, "expires_at", "is not after the run may start"),
        (
            {"expires_at": "2099-01-01T00:00:00Z", "after_seconds": 1e10},
            "expires_at",
            "is not after the run may start",
        ),
        ({"expires_in": "soon"}, "expires_in", "'soon' is not a duration"),
        ({"expires_in": 0}, "expires_in", "more than 0 seconds"),
        (
            {"expires_in": 60, "expires_at": "2099-01-01T00:00:00Z"},
            "expires_in",
            "expires_at or expires_in, not both",
        ),
    ],
)
async def test_bad_priorities_and_deadlines_are_refused_in_plain_words(
    idle_client: httpx.AsyncClient, fields: dict[str, object], where: str, words: str
) -> None:
    thread_id = await new_thread(idle_client)
    response = await idle_client.post(f"/threads/{thread_id}/runs", json={**BODY, **fields})
    problem = assert_problem(response, 422)
    assert words in problem["detail"], problem["detail"]
    assert where in problem["detail"], problem["detail"]
    listed = await idle_client.get(f"/threads/{thread_id}/runs")
    assert listed.json() == []  # nothing was queued


async def test_an_expired_run_ends_for_wait_and_join_and_metrics_count_it(
    client: httpx.AsyncClient,
) -> None:
    thread_id = await new_thread(client)
    # The first run holds the thread for 1.5 s; the second's deadline passes meanwhile.
    first = await client.post(f"/threads/{thread_id}/runs", json={**BODY, "after_seconds": 1.5})
    assert first.status_code == 200, first.text
    waited = await client.post(
        f"/threads/{thread_id}/runs/wait",
        json={**BODY, "multitask_strategy": "enqueue", "expires_in": 0.5},
    )
    assert waited.status_code == 200, waited.text
    error = waited.json()["__error__"]
    assert error["error"] == "RunExpired" and "never ran" in error["message"]
    run_id = waited.headers["content-location"].rsplit("/", 1)[-1]
    run = (await client.get(f"/threads/{thread_id}/runs/{run_id}")).json()
    assert (run["status"], run["plait_state"]) == ("error", "expired")
    assert run["plait_state_label"].startswith("expired: not started by ")
    joined = await client.get(f"/threads/{thread_id}/runs/{run_id}/join")
    assert "expired" in joined.json()["__error__"]["message"]
    # The thread went on: the first run's values, and it is free for the next run.
    thread = (await client.get(f"/threads/{thread_id}")).json()
    assert thread["status"] == "idle" and "summary" in thread["values"]
    text = (await client.get("/metrics")).text
    ((_, expired),) = samples(text, "plait_run_states", state="expired")
    assert expired >= 1
