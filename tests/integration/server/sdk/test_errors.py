"""RFC 9457 problem+json bodies on 404 and 422; their ``detail`` is what the SDK raises."""

from __future__ import annotations

import uuid

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError

from tests.integration.server.harness import Cluster


def assert_problem(response: httpx.Response, status: int) -> dict[str, object]:
    """``response`` is an RFC 9457 problem with ``status``; return its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status
    assert isinstance(body["title"], str) and body["title"]
    assert isinstance(body["detail"], str) and body["detail"]
    assert "type" in body
    return dict(body)


async def test_not_found_problems(sdk_server: Cluster, client: LangGraphClient) -> None:
    missing = str(uuid.uuid4())
    async with httpx.AsyncClient(base_url=sdk_server.url) as http:
        body = assert_problem(await http.get(f"/threads/{missing}"), 404)
        assert missing in str(body["detail"])
        assert_problem(await http.get("/assistants/no-such-graph"), 404)
        assert_problem(await http.get(f"/threads/{missing}/runs/{uuid.uuid4()}"), 404)

    with pytest.raises(NotFoundError) as caught:
        await client.threads.get(missing)
    assert str(caught.value) == caught.value.body["detail"]

    thread = await client.threads.create()
    with pytest.raises(NotFoundError):
        await client.runs.create(thread["thread_id"], "no-such-graph", input={})


async def test_invalid_request_bodies_are_422_problems(
    sdk_server: Cluster, client: LangGraphClient
) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    async with httpx.AsyncClient(base_url=sdk_server.url) as http:
        # A body the protocol's schema refuses: no assistant_id.
        missing = await http.post(f"/threads/{tid}/runs/wait", json={"input": {"text": "x"}})
        assert "assistant_id" in str(assert_problem(missing, 422)["detail"])
        wrong = await http.post(
            f"/threads/{tid}/runs", json={"assistant_id": "sdk-echo", "stream_mode": 42}
        )
        assert_problem(wrong, 422)


async def test_undeclared_input_is_refused_before_a_run_exists(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    with pytest.raises(UnprocessableEntityError) as caught:
        await client.runs.create(tid, "sdk-echo", input={"nope": 1})
    assert "nope" in str(caught.value)
    assert await client.runs.list(tid) == []
