"""Trusted MCP servers over HTTP against a real ``plait serve``: who sets them, who sees them.

The operator (an admin key) reads and sets each tenant's list; a tenant's own
member key reads only its own and sets none. Two tenants upload the same spec
(one compiled graph in the server), whose agent calls a real MCP server over
streamable HTTP (``tests/integration/mcp/specs/mcp_injected.py``); the run of
the tenant that does not trust it notes in its audit trail that the server's
descriptions were withheld, and the editor's check of the spec warns there.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import fresh_database
from tests.integration.mcp.conftest import free_port, listening
from tests.integration.server.harness import Cluster, cluster
from tests.integration.tenants.conftest import unique

pytestmark = pytest.mark.postgres

ADMIN_KEY = "admin-" + uuid.uuid4().hex
INJECTED_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "specs" / "mcp_injected.py"
SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {{name: trust-probe, version: "1.0.0"}}
spec:
  state: {{answer: {{type: string}}}}
  models:
    m:
      provider: scripted
      script:
        - tool_calls: [{{name: search, args: {{query: plait}}}}]
        - content: found it
  mcp_servers:
    injected: {{transport: http, url: "{url}", connect_timeout: 10s}}
  tools:
    search: {{kind: mcp, server: injected, timeout: 10s}}
  nodes:
    ask: {{kind: agent, model: m, tools: [search], prompt: Find it, output: answer}}
  edges:
    - {{from: START, to: ask}}
    - {{from: ask, to: END}}
"""


@pytest.fixture(scope="module")
def server(postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """``plait serve`` with an admin key and its worker, on a database of its own."""
    with (
        fresh_database(postgres_server_url) as url,
        cluster(
            url,
            tmp_path_factory.mktemp("trust-server"),
            [],
            extra_env={"PLAIT_ADMIN_KEY": ADMIN_KEY},
        ) as running,
    ):
        yield running


@pytest.fixture(scope="module")
def injected_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The injecting MCP server over streamable HTTP; its endpoint."""
    port = free_port()
    log = tmp_path_factory.mktemp("injected") / "server.log"
    command = [sys.executable, str(INJECTED_SERVER), "--http", str(port)]
    with listening(command, port, log):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
async def admin(server: Cluster) -> AsyncIterator[httpx.AsyncClient]:
    """Plain HTTP with the operator's admin key."""
    async with httpx.AsyncClient(
        base_url=server.url, headers={"x-api-key": ADMIN_KEY}, timeout=60.0
    ) as http_client:
        yield http_client


async def member(admin: httpx.AsyncClient, prefix: str) -> tuple[str, httpx.AsyncClient]:
    """A new tenant and a client acting with its one member key."""
    tenant = unique(prefix)
    assert (await admin.post("/tenants", json={"tenant_id": tenant})).status_code == 201
    key = (await admin.post(f"/tenants/{tenant}/keys", json={"role": "member"})).json()["key"]
    client = httpx.AsyncClient(base_url=admin.base_url, headers={"x-api-key": key}, timeout=60.0)
    return tenant, client


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """The problem JSON of ``response``, which must have ``status``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    return body


async def test_the_operator_sets_a_list_and_bad_entries_are_refused(
    admin: httpx.AsyncClient,
) -> None:
    tenant, own = await member(admin, "listed")
    async with own:
        path = f"/tenants/{tenant}/mcp-trust"
        fresh = (await admin.get(path)).json()
        assert fresh == {
            "tenant_id": tenant,
            "servers": [],
            "default": True,
            "trusts_declared_servers": False,
            "updated_at": None,
        }
        operator = (await admin.get("/tenants/default/mcp-trust")).json()
        assert operator["default"] and operator["trusts_declared_servers"]

        body = {
            "servers": [
                "https://mcp.example.com/mcp",
                "HTTPS://MCP.EXAMPLE.COM:443/mcp/",  # the same server: kept once
                "mcp-server-time --local-timezone UTC",
            ]
        }
        put = await admin.put(path, json=body)
        assert put.status_code == 200, put.text
        assert put.json()["servers"] == [
            "https://mcp.example.com/mcp",
            "mcp-server-time --local-timezone UTC",
        ]
        assert put.json()["default"] is False
        assert (await own.get("/mcp-trust")).json()["servers"] == put.json()["servers"]

        for servers, says in [
            (["ftp://files.example/mcp"], "only http:// and https://"),
            (["https://mcp.example.com/mcp?key=1"], "query"),
            (["python 'unbalanced"], "not a command line"),
            ([""], "empty"),
        ]:
            refused = problem(await admin.put(path, json={"servers": servers}), 422)
            assert says in refused["detail"], refused
            assert refused["type"] == "urn:plait:problem:mcp-trust-refused"
        assert problem(await admin.put(path, json={"servers": "x"}), 422)
        assert problem(await admin.put(path, json={"servers": [], "all": True}), 422)
        assert problem(await admin.put(path, json={"servers": ["a"] * 201}), 422)
        # Nothing refused was stored.
        assert (await admin.get(path)).json()["servers"] == put.json()["servers"]

        # A tenant's own key neither reads another's list nor sets any, its own included.
        problem(await own.put(path, json={"servers": []}), 403)
        problem(await own.get("/tenants/default/mcp-trust"), 403)
        missing = unique("nobody")
        problem(await admin.get(f"/tenants/{missing}/mcp-trust"), 404)
        problem(await admin.put(f"/tenants/{missing}/mcp-trust", json={"servers": []}), 404)

        cleared = await admin.delete(path)
        assert cleared.status_code == 200 and cleared.json()["default"] is True
        assert (await own.get("/mcp-trust")).json()["servers"] == []


async def test_a_tenant_that_does_not_trust_the_server_is_told_and_audited(
    admin: httpx.AsyncClient, injected_url: str
) -> None:
    trusting, trusting_client = await member(admin, "trusting")
    wary, wary_client = await member(admin, "wary")
    put = await admin.put(f"/tenants/{trusting}/mcp-trust", json={"servers": [injected_url]})
    assert put.status_code == 200, put.text
    text = SPEC.format(url=injected_url)
    async with trusting_client, wary_client:
        warned, trails, answers, noted = {}, {}, {}, {}
        for tenant, client in ((trusting, trusting_client), (wary, wary_client)):
            checked = (await client.post("/graphs/validate", json={"yaml": text})).json()
            warned[tenant] = [i for i in checked["issues"] if i["code"] == "mcp-server-untrusted"]
            assert (await client.post("/graphs", json={"yaml": text})).status_code == 201
            thread = (await client.post("/threads", json={})).json()["thread_id"]
            body = {"assistant_id": "trust-probe", "input": {}, "stream_mode": ["values", "custom"]}
            created = await client.post(f"/threads/{thread}/runs", json=body)
            assert created.status_code == 200, created.text
            run_id = created.json()["run_id"]
            answers[tenant] = (await client.get(f"/threads/{thread}/runs/{run_id}/join")).json()
            trails[tenant] = (await client.get(f"/runs/{run_id}/audit")).json()
            events = (await client.get(f"/runs/{run_id}/events")).json()
            noted[tenant] = [
                e["data"] for e in events if (e["data"] or {}).get("plait") == "mcp_untrusted"
            ]

        # Both runs called the tool and finished; the wary one without the server's words.
        assert answers[trusting]["answer"] == answers[wary]["answer"] == "found it"
        assert [r["kind"] for r in trails[trusting]] == ["tool_call"]
        assert [(r["kind"], r["node"], r["detail"]) for r in trails[wary]] == [
            ("mcp_untrusted", "ask", {"tools": ["search"], "servers": ["injected"]}),
            ("tool_call", "ask", trails[wary][1]["detail"]),
        ]

        # The run's stream (and journal) says so as it happens.
        assert noted[trusting] == []
        assert noted[wary] == [
            {"plait": "mcp_untrusted", "node": "ask", "tools": ["search"], "servers": ["injected"]}
        ]

        # Where the editor shows problems: a warning at the server, for the wary tenant only.
        assert warned[trusting] == []
        [warning] = warned[wary]
        assert warning["severity"] == "warning"
        assert warning["pointer"] == "/spec/mcp_servers/injected"
        assert injected_url in warning["fix"]
