"""Drop a resumable stream mid-run, rejoin with ``Last-Event-ID``: no gap, no repeat."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import httpx
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.schema import StreamPart
from langgraph_sdk.sse import SSEDecoder, aiter_lines_raw

from tests.integration.server.harness import Cluster
from tests.integration.server.sdk.helpers import (
    assert_contiguous,
    blocking_input,
    collect,
    events_named,
    is_waiting,
    release,
)


async def read_until_waiting(response: httpx.Response) -> list[StreamPart]:
    """SSE parts of ``response`` up to the ``wait`` node's custom event (then stop reading)."""
    decoder = SSEDecoder()
    parts: list[StreamPart] = []
    async for line in aiter_lines_raw(response):
        part = decoder.decode(cast(bytes, line).rstrip(b"\n"))
        if part is None or not part.event:
            continue
        parts.append(part)
        if is_waiting(part):
            return parts
    raise AssertionError(f"the stream ended before the run blocked: {parts}")


async def test_reconnect_with_last_event_id(
    sdk_server: Cluster, client: LangGraphClient, tmp_path: Path
) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    run_input = blocking_input(tmp_path)
    body = {
        "assistant_id": "sdk-blocking",
        "input": run_input,
        "stream_mode": ["values", "updates", "custom"],
        "stream_resumable": True,
        "on_disconnect": "continue",
    }
    async with (
        httpx.AsyncClient(base_url=sdk_server.url, timeout=30.0) as http,
        http.stream("POST", f"/threads/{tid}/runs/stream", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        location = response.headers["location"]
        run_url = response.headers["content-location"]
        before = await read_until_waiting(response)
        # Leaving the block closes the connection: a forced disconnect mid-run.
    run_id = before[0].data["run_id"]
    assert location == f"/threads/{tid}/runs/{run_id}/stream"
    assert run_url == f"/threads/{tid}/runs/{run_id}"
    assert before[0].event == "metadata"
    assert (await client.runs.get(tid, run_id))["status"] == "running"

    release(run_input)
    after = await collect(
        client.runs.join_stream(
            tid, run_id, stream_mode=body["stream_mode"], last_event_id=before[-1].id
        )
    )

    union = before + after
    assert_contiguous([part.id for part in union])
    assert after[-1].event == "end"
    assert [p.event for p in after].count("metadata") == 0  # nothing before the id again
    updated = [next(iter(u)) for u in events_named(union, "updates")]
    assert updated == ["first", "wait", "last"]
    assert events_named(union, "values")[-1]["steps"] == ["first", "wait-finished", "last"]


async def test_rejoin_a_finished_run_replays_the_rest(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    original = await collect(
        client.runs.stream(
            tid,
            "sdk-echo",
            input={"text": "again"},
            stream_mode=["values", "updates"],
            stream_resumable=True,
        )
    )
    run_id = original[0].data["run_id"]
    assert_contiguous([part.id for part in original])
    # The journal outlives the run: rejoining a finished run replays what came after the id.
    # No stream_mode: the SDK then sends an empty `stream_mode=` query parameter.
    replay = await collect(client.runs.join_stream(tid, run_id, last_event_id=original[0].id))
    assert [(p.event, p.data, p.id) for p in replay] == [
        (p.event, p.data, p.id) for p in original[1:]
    ]
