"""The editor for a tenant whose operator does not trust an MCP server its agent uses.

The problems list warns at the server (from ``POST /graphs/validate``), and the
agent node's properties name its MCP tools and say what a model is shown of an
untrusted server. Once the operator trusts the server, the warning goes.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import SPEC_SOURCES, guarded
from tests.e2e.helpers import api, flow_node, open_graph
from tests.integration.server.harness import Cluster, fresh_cluster

ADMIN_KEY = secrets.token_hex(32)
TENANT = "trust-e2e"
#: Nothing listens there: checking a spec never connects to its servers.
SERVER_URL = "http://127.0.0.1:9/mcp"
SPEC = f"""\
apiVersion: plait/v1
kind: Graph
metadata: {{name: trust-view, version: "1.0.0"}}
spec:
  state: {{answer: {{type: string}}}}
  models:
    m:
      provider: scripted
      script: [{{content: done}}]
  mcp_servers:
    web: {{transport: http, url: "{SERVER_URL}"}}
  tools:
    search: {{kind: mcp, server: web}}
  nodes:
    ask: {{kind: agent, model: m, tools: [search], prompt: Find it, output: answer}}
  edges:
    - {{from: START, to: ask}}
    - {{from: ask, to: END}}
"""


@pytest.fixture(scope="module")
def trust_server(
    editor_dist: object, postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """``plait serve`` with an admin key, a tenant, and the spec uploaded as the tenant."""
    with fresh_cluster(
        postgres_server_url,
        tmp_path_factory.mktemp("e2e-trust"),
        SPEC_SOURCES,
        extra_env={"PLAIT_ADMIN_KEY": ADMIN_KEY},
    ) as running:
        yield running


def test_an_untrusted_server_is_warned_about_and_explained(
    page: Page, trust_server: Cluster
) -> None:
    base = trust_server.url
    with api(base, ADMIN_KEY) as admin:
        assert admin.post("/tenants", json={"tenant_id": TENANT}).status_code == 201
        key = admin.post(f"/tenants/{TENANT}/keys", json={"role": "member"}).json()["key"]
    with api(base, key) as member:
        uploaded = member.post("/graphs", json={"yaml": SPEC})
        assert uploaded.status_code == 201, uploaded.text

    with guarded(page):
        page.goto(base + "/")
        page.evaluate(f"localStorage.setItem('plait.apiKey', {key!r})")
        # Started again with the key: the page's first requests, sent before it was set,
        # may have opened the key prompt over the canvas.
        page.reload()
        open_graph(page, base, "trust-view", "1.0.0")
        problem = page.get_by_test_id("problem-row")
        expect(problem).to_have_count(1)
        expect(problem).to_contain_text(
            "MCP server `web` is not on tenant `trust-e2e`'s trust list"
        )
        expect(problem).to_have_attribute("data-line", "11")  # at `web:`

        flow_node(page, "ask").click()
        expect(page.get_by_test_id("properties-panel")).to_have_attribute("data-node", "ask")
        note = page.get_by_test_id("properties-mcp-trust")
        expect(note).to_contain_text("MCP tools: search (web).")
        expect(note).to_contain_text("only if the operator trusts that server for your tenant")

        with api(base, ADMIN_KEY) as admin:
            put = admin.put(f"/tenants/{TENANT}/mcp-trust", json={"servers": [SERVER_URL]})
            assert put.status_code == 200, put.text
        with page.expect_response(lambda r: r.url.endswith("/graphs/validate")) as checked:
            page.reload()
        assert checked.value.json() == {"issues": []}
        expect(page.get_by_test_id("problems-count")).to_have_text("0")
