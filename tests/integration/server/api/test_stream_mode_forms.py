"""``stream_mode`` in every form the SDKs send: a string, a list, repeated query
parameters, one JSON array in the query (the JS SDK's 2.0 line), empty."""

from __future__ import annotations

import httpx

from tests.integration.server.api.conftest import (
    SUMMARY_INPUT,
    assert_problem,
    new_thread,
    parse_sse,
)


async def _run(client: httpx.AsyncClient, stream_mode: object) -> tuple[str, list[str]]:
    """Stream a summarize run with ``stream_mode`` in its body; its rejoin URL and event names."""
    thread_id = await new_thread(client)
    response = await client.post(
        f"/threads/{thread_id}/runs/stream",
        json={"assistant_id": "summarize", "input": SUMMARY_INPUT, "stream_mode": stream_mode},
    )
    assert response.status_code == 200, response.text
    return response.headers["Location"], [frame.event for frame in parse_sse(response.text)[0]]


async def test_body_takes_one_mode_or_a_list(client: httpx.AsyncClient) -> None:
    _, one = await _run(client, "updates")
    assert one == ["metadata", "updates", "updates", "end"]
    _, listed = await _run(client, ["updates", "values"])
    assert set(listed[1:-1]) == {"updates", "values"}
    thread_id = await new_thread(client)
    refused = await client.post(
        f"/threads/{thread_id}/runs/stream",
        json={"assistant_id": "summarize", "input": SUMMARY_INPUT, "stream_mode": "tokens"},
    )
    assert_problem(refused, 422)


async def test_rejoin_takes_every_query_form(client: httpx.AsyncClient) -> None:
    stream_url, events = await _run(client, ["values", "updates"])
    every = len(events)

    async def names(query: str) -> list[str]:
        response = await client.get(f"{stream_url}?{query}")
        assert response.status_code == 200, response.text
        return [frame.event for frame in parse_sse(response.text)[0]]

    updates_only = ["metadata", "updates", "updates", "end"]
    assert await names("stream_mode=updates") == updates_only
    # The JS SDK 2.0 line: one JSON array, raw or percent-encoded.
    assert await names('stream_mode=["updates"]') == updates_only
    assert await names("stream_mode=%5B%22updates%22%5D") == updates_only
    both = await names('stream_mode=["updates","values"]')
    assert len(both) == every
    # Repeated parameters (the Python SDK, @langchain/langgraph-sdk 1.x).
    assert await names("stream_mode=updates&stream_mode=values") == both
    # Empty (what the SDKs send for "no mode given"), or an empty array: every event.
    assert len(await names("stream_mode=")) == every
    assert len(await names("stream_mode=[]")) == every
    assert len(await names("")) == every

    for query in ("stream_mode=tokens", 'stream_mode=["updates","tokens"]', "stream_mode=[updates"):
        body = assert_problem(await client.get(f"{stream_url}?{query}"), 422)
        assert "stream_mode" in body["detail"] and "messages-tuple" in body["detail"]
