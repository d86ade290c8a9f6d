"""A run a stream or wait request creates is followed from before its commit: its events
come in the journal's notifications alone, no read of the table, and whatever way the
response ends, nothing of it stays subscribed."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI

from plait.server.queue.journal import JournalEvent, JournalListener
from tests.integration.server.api.conftest import SUMMARY_INPUT, new_thread, parse_sse
from tests.polling import until

SUMMARIZE = {"assistant_id": "summarize", "input": SUMMARY_INPUT, "stream_mode": ["values"]}


@pytest.fixture
def reads(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The runs whose journal the app's listener reads from the table, in order."""
    listener: JournalListener = app.state.services.listener
    read = listener._read
    seen: list[str] = []

    async def counted(run_id: str, after: int) -> tuple[str | None, list[JournalEvent]]:
        seen.append(run_id)
        return await read(run_id, after)

    monkeypatch.setattr(listener, "_read", counted)
    yield seen


def _subscribed(app: FastAPI, run_id: str) -> bool:
    # The listener's subscriptions by run: one left behind would be fed that run's
    # notifications for as long as the process lives.
    listener: JournalListener = app.state.services.listener
    return run_id in listener._wakers


async def test_a_new_run_streams_and_is_waited_for_with_no_read(
    app: FastAPI, client: httpx.AsyncClient, reads: list[str]
) -> None:
    thread_id = await new_thread(client)

    streamed = await client.post(f"/threads/{thread_id}/runs/stream", json=SUMMARIZE)
    waited = await client.post(f"/threads/{thread_id}/runs/wait", json=SUMMARIZE)
    # Kept: deleting its thread when it ends waits for it by another, reading way.
    stateless = await client.post("/runs/stream", json={**SUMMARIZE, "on_completion": "keep"})

    frames, _ = parse_sse(streamed.text)
    assert [frame.event for frame in frames] == ["metadata", "values", "values", "values", "end"]
    assert [frame.id for frame in frames] == ["1", "2", "3", "4", "5"]
    assert frames[-2].data["summary"].startswith("The customer was charged twice")
    assert waited.json()["summary"].startswith("The customer was charged twice")
    assert [frame.event for frame in parse_sse(stateless.text)[0]][-1] == "end"
    assert reads == []
    assert not _subscribed(app, frames[0].data["run_id"])


async def test_a_repeated_request_streams_its_first_run_from_the_table(
    app: FastAPI, client: httpx.AsyncClient, reads: list[str]
) -> None:
    thread_id = await new_thread(client)
    headers = {"Idempotency-Key": f"follow-{thread_id}"}
    path = f"/threads/{thread_id}/runs/stream"

    first = parse_sse((await client.post(path, json=SUMMARIZE, headers=headers)).text)[0]
    again = parse_sse((await client.post(path, json=SUMMARIZE, headers=headers)).text)[0]

    run_id = first[0].data["run_id"]
    assert [(frame.id, frame.data) for frame in again] == [
        (frame.id, frame.data) for frame in first
    ]
    # The repeat was not created now: only a read can give it the first run's events.
    assert reads == [run_id]
    assert not _subscribed(app, run_id)


async def test_a_client_gone_after_the_first_frame_leaves_nothing_subscribed(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    thread_id = await new_thread(client)
    body = {**SUMMARIZE, "on_disconnect": "continue"}
    async with client.stream("POST", f"/threads/{thread_id}/runs/stream", json=body) as response:
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                run_id = line.partition(":")[2].split('"run_id":"')[1].split('"')[0]
                break

    async def let_go() -> bool:
        return not _subscribed(app, run_id)

    await until(let_go, "the stream's subscription to go")


async def test_a_refused_stream_request_leaves_nothing_subscribed(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    # Refused inside the creation, after the run was followed: its input is not the graph's.
    listener: JournalListener = app.state.services.listener
    before = set(listener._wakers)
    thread_id = await new_thread(client)

    refused = await client.post(
        f"/threads/{thread_id}/runs/stream",
        json={"assistant_id": "summarize", "input": {"wrong": 1}},
    )

    assert refused.status_code == 422
    assert "summarize accepts: text" in refused.json()["detail"]
    assert set(listener._wakers) == before
