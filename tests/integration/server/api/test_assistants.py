"""Assistants: every graph version, by uuid, by name@version, or by graph name."""

from __future__ import annotations

import httpx

from plait.server.graphs.versions import assistant_id
from tests.integration.server.api.conftest import assert_problem


async def test_search_lists_graph_versions_with_filters_and_pages(
    client: httpx.AsyncClient,
) -> None:
    found = (await client.post("/assistants/search", json={"graph_id": "summarize"})).json()
    assert [item["graph_id"] for item in found] == ["summarize"]
    item = found[0]
    assert item["assistant_id"] == assistant_id("summarize", "1.0.0")
    assert item["version"] == 1
    assert item["metadata"]["plait_version"] == "1.0.0"
    assert set(item) >= {"config", "context", "name", "description", "created_at", "updated_at"}

    first = await client.post("/assistants/search", json={"limit": 1})
    assert len(first.json()) == 1
    assert first.headers["X-Pagination-Next"] == "1"
    none = await client.post("/assistants/search", json={"metadata": {"plait_version": "9.9.9"}})
    assert none.json() == []


async def test_get_by_uuid_name_and_ref(client: httpx.AsyncClient) -> None:
    uuid = assistant_id("refund-approval", "1.0.0")
    by_uuid = (await client.get(f"/assistants/{uuid}")).json()
    assert by_uuid["graph_id"] == "refund-approval"
    assert (await client.get("/assistants/refund-approval")).json() == by_uuid
    assert (await client.get("/assistants/refund-approval@1.0.0")).json() == by_uuid
    body = assert_problem(await client.get("/assistants/no-such-graph"), 404)
    assert "no-such-graph" in body["detail"]


async def test_graph_schemas_and_versions(client: httpx.AsyncClient) -> None:
    graph = (await client.get("/assistants/refund-approval/graph")).json()
    node_ids = {node["id"] for node in graph["nodes"]}
    assert {"assess", "approve", "refund", "decline"} <= node_ids
    assert {"source": "refund", "target": "__end__"}.items() <= next(
        edge for edge in graph["edges"] if edge["source"] == "refund"
    ).items()

    schemas = (await client.get("/assistants/summarize/schemas")).json()
    assert schemas["graph_id"] == "summarize"
    assert "text" in schemas["input_schema"]["properties"]
    assert set(schemas["output_schema"]["properties"]) == {"summary", "key_points"}

    versions = (await client.post("/assistants/summarize/versions", json={})).json()
    assert [item["metadata"]["plait_version"] for item in versions] == ["1.0.0"]
    assert_problem(await client.get("/assistants/nope/schemas"), 404)


async def test_creating_assistants_points_to_graph_upload(client: httpx.AsyncClient) -> None:
    body = assert_problem(await client.post("/assistants", json={"graph_id": "x"}), 405)
    assert "POST /graphs" in body["detail"]
