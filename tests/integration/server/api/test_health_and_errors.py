"""Health routes, the offline API docs, and problem+json for every kind of error."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from plait.server.http import problems
from tests.integration.server.api.conftest import assert_problem
from tests.integration.server.harness import client_of


async def test_health_routes(client: httpx.AsyncClient) -> None:
    assert (await client.get("/ok")).json() == {"ok": True}
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    ready = await client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready"
    assert 2 in ready.json()["migrations"]
    info = (await client.get("/info")).json()
    assert info["flags"]["assistants"] is True
    assert info["version"]


async def test_docs_are_served_without_network(client: httpx.AsyncClient) -> None:
    page = await client.get("/docs")
    assert page.status_code == 200
    assert "/docs/static/swagger-ui-bundle.js" in page.text
    assert "http://" not in page.text and "https://" not in page.text
    bundle = await client.get("/docs/static/swagger-ui-bundle.js")
    assert bundle.status_code == 200 and len(bundle.content) > 100_000
    assert (await client.get("/docs/static/swagger-ui.css")).status_code == 200
    schema = (await client.get("/openapi.json")).json()
    for path in ("/threads/{thread_id}/runs/stream", "/graphs", "/approvals", "/readyz"):
        assert path in schema["paths"]


async def test_unknown_route_and_wrong_method_are_problems(client: httpx.AsyncClient) -> None:
    missing = assert_problem(await client.get("/no/such/route"), 404)
    assert "/no/such/route" in missing["detail"]
    wrong = assert_problem(await client.delete("/ok"), 405)
    assert "DELETE" in wrong["detail"]


async def test_request_validation_is_a_problem_with_errors(client: httpx.AsyncClient) -> None:
    body = assert_problem(await client.post("/threads/search", json={"limit": "many"}), 422)
    assert body["errors"][0]["loc"] == ["body", "limit"]
    assert "limit" in body["detail"]
    not_json = await client.post(
        "/threads", content=b"{", headers={"content-type": "application/json"}
    )
    assert_problem(not_json, 422)


async def test_unexpected_error_is_a_500_problem_without_traceback() -> None:
    app = FastAPI()
    problems.install(app)

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("secret internals")

    async with client_of(app) as http:
        response = await http.get("/boom")
    body = assert_problem(response, 500)
    assert "secret internals" not in response.text
    assert "Traceback" not in response.text
    assert "RuntimeError" in body["detail"]
