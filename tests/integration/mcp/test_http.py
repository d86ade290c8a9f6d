"""The repository's demo MCP server over streamable HTTP (a real server process)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plait.engine.errors import ToolReportedError
from plait.engine.governance.retries import classify, invoke_tool
from plait.engine.spec.models import McpServerDef
from plait.engine.tools.mcp.hub import HUB, Credentials, ServerConnection, on_hub
from plait.engine.tools.mcp.schema_check import ToolArgumentsInvalid
from tests.integration.mcp.conftest import (
    SPECS,
    DemoServer,
    free_port,
    load_tool,
    serve_demo_http,
)


def http(demo: DemoServer, **extra: Any) -> dict[str, dict[str, Any]]:
    return {"demo": {"transport": "http", "url": demo.url, **extra}}


async def test_http_server_answers_a_call(demo_http: DemoServer) -> None:
    tool = load_tool("lookup", {"server": "demo", "tool": "lookup_order"}, http(demo_http))
    assert await tool.ainvoke({"order_id": "A-1001"}) == {
        "order_id": "A-1001",
        "customer": "ada@example.com",
        "total": 40.0,
        "status": "shipped",
    }


async def test_headers_come_from_secrets(
    demo_http: DemoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_TOKEN", "Bearer s3cret-value")
    servers = http(demo_http, headers={"Authorization": "DEMO_TOKEN"})
    tool = load_tool("whoami", {"server": "demo"}, servers)
    assert await tool.ainvoke({}) == {"authorization": "Bearer s3cret-value"}


async def test_each_owner_of_secrets_has_a_session_of_its_own(demo_http: DemoServer) -> None:
    definition = McpServerDef.model_validate(
        {"transport": "http", "url": demo_http.url, "headers": {"Authorization": "TOKEN"}}
    )
    server = ServerConnection("demo", definition, SPECS)
    acme = Credentials("tenant:acme", {"TOKEN": "Bearer acme-token"})
    globex = Credentials("tenant:globex", {"TOKEN": "Bearer globex-token"})

    async def whoami(creds: Credentials) -> Any:
        result = await on_hub(server, creds, lambda client, _: client.call_tool("whoami", {}))
        return result.structured_content

    first, _ = await HUB.call(HUB.session(server, acme))
    for creds, token in [(acme, "acme"), (globex, "globex"), (acme, "acme")]:
        assert await whoami(creds) == {"authorization": f"Bearer {token}-token"}
    # Neither evicted the other: acme's session is the one it opened first.
    again, _ = await HUB.call(HUB.session(server, acme))
    assert again is first
    rotated = Credentials("tenant:acme", {"TOKEN": "Bearer acme-rotated"})
    assert await whoami(rotated) == {"authorization": "Bearer acme-rotated"}
    assert (await HUB.call(HUB.session(server, rotated)))[0] is not first


async def test_bad_arguments_never_reach_the_server(demo_http: DemoServer) -> None:
    tool = load_tool("ticket", {"server": "demo", "tool": "create_ticket"}, http(demo_http))
    before = len(demo_http.calls_of("create_ticket"))
    with pytest.raises(ToolArgumentsInvalid, match="title"):
        await tool.ainvoke({"title": 123})
    assert len(demo_http.calls_of("create_ticket")) == before


async def test_an_error_result_with_a_status_is_retried_by_its_class(
    demo_http: DemoServer,
) -> None:
    retry = {"max_attempts": 3, "initial_interval": 0.01, "jitter": False}
    tool = load_tool("fail", {"server": "demo", "retry": retry}, http(demo_http))
    before = len(demo_http.calls_of("fail"))
    with pytest.raises(ToolReportedError, match="unavailable") as raised:
        await invoke_tool(tool, {"status": 503})  # the gateway's call: breaker and retries
    assert raised.value.status_code == 503
    assert classify(raised.value) == "server_error"
    assert len(demo_http.calls_of("fail")) - before == 3  # every attempt reached the server

    with pytest.raises(ToolReportedError) as refused:
        await invoke_tool(tool, {"status": 400, "message": "bad order id"})
    assert classify(refused.value) == "validation"
    assert len(demo_http.calls_of("fail")) - before == 4  # a 400 is not retried


async def test_a_non_idempotent_tool_is_never_retried(demo_http: DemoServer) -> None:
    retry = {"max_attempts": 3, "initial_interval": 0.01}
    tool = load_tool(
        "fail", {"server": "demo", "retry": retry, "idempotent": False}, http(demo_http)
    )
    before = len(demo_http.calls_of("fail"))
    with pytest.raises(ToolReportedError):
        await invoke_tool(tool, {"status": 503})
    assert len(demo_http.calls_of("fail")) - before == 1


async def test_a_restarted_server_gets_a_new_session(tmp_path: Path) -> None:
    port = free_port()
    servers = {"demo": {"transport": "http", "url": f"http://127.0.0.1:{port}/mcp"}}
    with serve_demo_http(tmp_path, port):
        tool = load_tool("lookup", {"server": "demo", "tool": "lookup_order"}, servers)
        assert (await tool.ainvoke({"order_id": "A-1001"}))["status"] == "shipped"
    # The same address, a new process: it answers the old session id with 404.
    with serve_demo_http(tmp_path, port):
        try:
            found = await tool.ainvoke({"order_id": "A-1002"})
        except ConnectionError:  # the call that found the session gone (class `network`)
            found = await tool.ainvoke({"order_id": "A-1002"})
        assert found["status"] == "processing"
