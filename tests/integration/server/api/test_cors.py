"""CORS: what a browser on another origin is told, as its preflights and requests see it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from plait.server.http.cors import CorsPolicy
from tests.integration.server.harness import client_of, running_app

DEV_SERVER = "http://localhost:5173"
PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "x-api-key, content-type",
}


async def test_a_local_dev_server_may_call_the_api_by_default(client: httpx.AsyncClient) -> None:
    for origin in (DEV_SERVER, "http://127.0.0.1:3000", "http://[::1]:8080"):
        preflight = await client.options("/threads", headers={"Origin": origin, **PREFLIGHT})
        assert preflight.status_code == 200, preflight.text
        assert preflight.headers["access-control-allow-origin"] == origin
        allowed = preflight.headers["access-control-allow-headers"].lower()
        assert "x-api-key" in allowed and "content-type" in allowed
        assert "POST" in preflight.headers["access-control-allow-methods"]

    created = await client.post("/threads", json={}, headers={"Origin": DEV_SERVER})
    assert created.status_code == 200, created.text
    assert created.headers["access-control-allow-origin"] == DEV_SERVER


async def test_a_stream_exposes_the_headers_the_sdks_read(client: httpx.AsyncClient) -> None:
    thread = (await client.post("/threads", json={})).json()["thread_id"]
    response = await client.post(
        f"/threads/{thread}/runs/stream",
        json={"assistant_id": "summarize", "input": {"text": "Cross-origin."}},
        headers={"Origin": DEV_SERVER},
    )
    assert response.status_code == 200, response.text
    assert response.headers["access-control-allow-origin"] == DEV_SERVER
    exposed = {
        h.strip().lower() for h in response.headers["access-control-expose-headers"].split(",")
    }
    assert {"content-location", "location"} <= exposed
    assert response.headers["content-location"].startswith(f"/threads/{thread}/runs/")


async def test_other_origins_get_no_permission(client: httpx.AsyncClient) -> None:
    origin = "https://evil.example"
    preflight = await client.options("/threads", headers={"Origin": origin, **PREFLIGHT})
    assert preflight.status_code == 400
    assert "access-control-allow-origin" not in preflight.headers
    # A look-alike of a local origin is no local origin.
    for fake in ("http://localhost.evil.example", "http://127.0.0.1.evil.example:80"):
        answer = await client.get("/ok", headers={"Origin": fake})
        assert "access-control-allow-origin" not in answer.headers


async def test_a_refusal_is_readable_by_the_front_end(client: httpx.AsyncClient) -> None:
    """A 413 from the request limits carries CORS headers, so the page sees the problem."""
    huge = b"{" + b" " * (2 * 1024 * 1024) + b"}"
    response = await client.post(
        "/threads",
        content=huge,
        headers={"Origin": DEV_SERVER, "content-type": "application/json"},
    )
    assert response.status_code == 413
    assert response.headers["access-control-allow-origin"] == DEV_SERVER
    assert response.headers["content-type"].startswith("application/problem+json")


@pytest.fixture
async def listed_only(database_url: str, specs_dir: Path) -> AsyncIterator[httpx.AsyncClient]:
    """An app that allows one listed origin and no local ones."""
    policy = CorsPolicy(origins=("https://app.example.com",), origin_regex="")
    async with (
        running_app(database_url, specs_dir, workers=0, cors=policy) as application,
        client_of(application) as http,
    ):
        yield http


async def test_an_operator_lists_the_origins(listed_only: httpx.AsyncClient) -> None:
    allowed = await listed_only.options(
        "/threads", headers={"Origin": "https://app.example.com", **PREFLIGHT}
    )
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://app.example.com"
    local = await listed_only.options("/threads", headers={"Origin": DEV_SERVER, **PREFLIGHT})
    assert local.status_code == 400
    assert "access-control-allow-origin" not in local.headers


def test_a_policy_that_cannot_work_is_refused() -> None:
    with pytest.raises(ValueError, match="list the front ends' origins"):
        CorsPolicy(origins=("*",), credentials=True)
    with pytest.raises(ValueError, match="no path"):
        CorsPolicy(origins=("https://app.example.com/",))
