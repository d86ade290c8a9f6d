"""What the editor's run timeline reads from a run's journal: when each event was
written, and the task start/result timestamps of the ``debug`` mode; the SSE
frames a client asked for carry neither addition."""

from __future__ import annotations

from datetime import datetime

import httpx

from tests.integration.server.api.conftest import SUMMARY_INPUT, new_thread, parse_sse

EDITOR_MODES = ["updates", "messages-tuple", "custom", "values", "debug"]


async def test_journal_events_say_when_they_were_written(client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(client)
    response = await client.post(
        f"/threads/{thread_id}/runs/stream",
        json={"assistant_id": "summarize", "input": SUMMARY_INPUT, "stream_mode": EDITOR_MODES},
    )
    frames, _ = parse_sse(response.text)
    run_id = frames[0].data["run_id"]
    # The stream is the Agent Server's: no field of ours added to its frames.
    assert all("at" not in frame.data for frame in frames if isinstance(frame.data, dict))

    events = (await client.get(f"/runs/{run_id}/events")).json()
    assert [event["seq"] for event in events] == list(range(1, len(frames) + 1))
    times = [datetime.fromisoformat(event["at"]) for event in events]
    assert all(time.tzinfo is not None for time in times)
    assert times == sorted(times)
    run = (await client.get(f"/threads/{thread_id}/runs/{run_id}")).json()
    assert datetime.fromisoformat(run["created_at"]) <= times[-1]


async def test_debug_tasks_time_each_step(client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(client)
    response = await client.post(
        f"/threads/{thread_id}/runs/stream",
        json={"assistant_id": "summarize", "input": SUMMARY_INPUT, "stream_mode": EDITOR_MODES},
    )
    frames, _ = parse_sse(response.text)
    debug = [frame.data for frame in frames if frame.event == "debug"]
    started = {d["payload"]["id"]: d for d in debug if d["type"] == "task"}
    finished = {d["payload"]["id"]: d for d in debug if d["type"] == "task_result"}
    assert [d["payload"]["name"] for d in started.values()] == ["clean", "summarize"]
    assert started.keys() == finished.keys()
    for task_id, start in started.items():
        begun = datetime.fromisoformat(start["timestamp"])
        ended = datetime.fromisoformat(finished[task_id]["timestamp"])
        assert begun <= ended
        # The node's input is the state it read, its result the writes `updates` shows.
        assert "text" in start["payload"]["input"]
    updates = [frame.data for frame in frames if frame.event == "updates"]
    results = [finished[task_id]["payload"]["result"] for task_id in started]
    assert results == [next(iter(update.values())) for update in updates]
