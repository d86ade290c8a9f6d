"""Tenants' secrets over HTTP against a real ``plait serve``: who may read what.

A listener on 127.0.0.1 records every request it gets. Specs put secrets on
the wire in each place a spec can: a python tool's ``secrets``, MCP http
``headers``, ``a2a`` node ``headers`` and a model's ``api_key_env`` with its
``base_url``. The server's own settings (the admin key, the database URL)
must never reach the listener, for any tenant; a tenant's granted secret
must, and another tenant's secret of the same name must not. A stdio MCP
server of the ``default`` tenant must see no ``PLAIT_*`` value either.
"""

from __future__ import annotations

import http.server
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from engine.spec.loader import parse_spec
from server.registry import assistant_id
from tests.conftest import fresh_database
from tests.integration.server.harness import Cluster, cluster
from tests.integration.tenants.conftest import SPECS_DIR, unique

pytestmark = pytest.mark.postgres

ADMIN_KEY = "admin-" + uuid.uuid4().hex
#: A variable of the server's environment: the operator's, readable only where opted in.
OPERATOR_TOKEN = "operator-env-" + uuid.uuid4().hex
SPEC_SOURCES = [SPECS_DIR / "secret_hook.py"]
PLACES = ("python_tool", "mcp_headers", "a2a_headers", "model_key")


@dataclass
class Listener:
    """An HTTP server on 127.0.0.1 that records each request and answers 500."""

    url: str
    requests: list[str] = field(default_factory=list)

    def under(self, tag: str) -> list[str]:
        """The requests whose path starts with ``/<tag>/``."""
        return [text for text in self.requests if text.split(" ", 2)[1].startswith(f"/{tag}/")]


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    """The listener, for the whole module."""
    seen: list[str] = []

    class Record(http.server.BaseHTTPRequestHandler):
        def _record(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
            seen.append(f"{self.command} {self.path} HTTP\n{self.headers}\n{body}")
            self.send_response(500)
            self.send_header("content-length", "0")
            self.end_headers()

        do_GET = do_POST = do_DELETE = _record

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: pytest shows the server logs instead

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Record)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Listener(f"http://127.0.0.1:{server.server_address[1]}", seen)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def database_url_of_server(postgres_server_url: str) -> Iterator[str]:
    """The server's own database (the tests store versions in it directly)."""
    with fresh_database(postgres_server_url) as url:
        yield url


@pytest.fixture(scope="module")
def server(
    database_url_of_server: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """``plait serve`` with an admin key, an operator variable and in-process workers.

    ``default`` may read ``OPERATOR_TOKEN`` from the environment (the opt-in);
    no other tenant may.
    """
    with cluster(
        database_url_of_server,
        tmp_path_factory.mktemp("secrets-server"),
        SPEC_SOURCES,
        extra_env={
            "PLAIT_ADMIN_KEY": ADMIN_KEY,
            "OPERATOR_TOKEN": OPERATOR_TOKEN,
            "PLAIT_ENV_SECRETS": "OPERATOR_TOKEN",
        },
    ) as running:
        yield running


@pytest.fixture
async def admin(server: Cluster) -> AsyncIterator[httpx.AsyncClient]:
    """Plain HTTP with the admin key (tenant ``default``)."""
    async with httpx.AsyncClient(
        base_url=server.url, headers={"x-api-key": ADMIN_KEY}, timeout=60.0
    ) as http_client:
        yield http_client



async def member(server: Cluster, admin: httpx.AsyncClient, prefix: str) -> tuple[str, str]:
    """A new tenant with one member key: ``(tenant_id, key)``."""
    tenant = unique(prefix)
    created = await admin.post("/tenants", json={"tenant_id": tenant})
    assert created.status_code == 201, created.text
    key = await admin.post(f"/tenants/{tenant}/keys", json={"role": "member"})
    assert key.status_code == 201, key.text
    return tenant, key.json()["key"]


def client(server: Cluster, key: str) -> httpx.AsyncClient:
    """Plain HTTP acting with ``key``."""
    return httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key}, timeout=60.0)


def spec(place: str, name: str, url: str, secrets: list[str]) -> str:
    """A spec that sends ``secrets`` to ``url`` from ``place`` (one of :data:`PLACES`)."""
    head = (
        f'apiVersion: plait/v1\nkind: Graph\nmetadata: {{name: {name}, version: "1.0.0"}}\n'
        "spec:\n  state: {out: {}}\n"
    )
    listed = ", ".join(secrets)
    edges = "  edges:\n    - {from: START, to: call}\n    - {from: call, to: END}\n"
    if place == "python_tool":
        body = (
            f"  secrets: [{listed}]\n"
            f'  tools:\n    hook: {{function: "secret_hook:send", secrets: [{listed}]}}\n'
            f"  nodes:\n    call: {{kind: tool, tool: hook, args: {{url: \"'{url}/hook'\"}}, "
            "output: out}\n"
        )
    elif place == "mcp_headers":
        headers = ", ".join(f"X-Secret-{i}: {secret}" for i, secret in enumerate(secrets))
        body = (
            f"  secrets: [{listed}]\n"
            f'  mcp_servers:\n    probe: {{transport: http, url: "{url}/mcp", '
            f"headers: {{{headers}}}, connect_timeout: 10s}}\n"
            "  tools:\n    whoami: {kind: mcp, server: probe}\n"
            "  nodes:\n    call: {kind: tool, tool: whoami, output: out}\n"
        )
    elif place == "a2a_headers":
        headers = ", ".join(f"X-Secret-{i}: {secret}" for i, secret in enumerate(secrets))
        body = (
            f"  secrets: [{listed}]\n"
            f'  nodes:\n    call: {{kind: a2a, url: "{url}", message: hi, '
            f"headers: {{{headers}}}, request_timeout: 10s, output: out}}\n"
        )
    else:
        assert place == "model_key" and len(secrets) == 1
        body = (
            "  models:\n"
            f'    m: {{provider: openai, model: gpt-test, base_url: "{url}/v1", '
            f"api_key_env: {secrets[0]}, params: {{max_retries: 0}}}}\n"
            "  nodes:\n    call: {kind: llm, model: m, prompt: hi, output: out}\n"
        )
    return head + body + edges


def store_directly(database_url: str, tenant: str, text: str) -> str:
    """Store a version as an upload before this check existed would have; return its name."""
    loaded = parse_spec(text, "<stored>")
    with psycopg.connect(database_url) as conn:
        conn.execute(
            "INSERT INTO plait_graph_versions "
            "(name, version, digest, yaml, assistant_id, file, tenant_id) "
            "VALUES (%s, %s, %s, %s, %s, NULL, %s)",
            (
                loaded.name,
                loaded.version,
                loaded.digest,
                text,
                assistant_id(loaded.name, loaded.version, tenant),
                tenant,
            ),
        )
    return loaded.name


async def run_to_end(http_client: httpx.AsyncClient, graph: str) -> dict[str, Any]:
    """A stateless run of ``graph``, waited for; its final values (or ``__error__``)."""
    response = await http_client.post("/runs/wait", json={"assistant_id": graph, "input": {}})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def settings_of_server(database_url: str) -> list[str]:
    """The values no tenant may ever read: the admin key, the database URL, its password."""
    values = [ADMIN_KEY, database_url]
    password = conninfo_to_dict(database_url).get("password")
    return values + ([str(password)] if password else [])


@pytest.mark.parametrize("place", PLACES)
async def test_no_tenant_reads_the_servers_own_settings(
    place: str,
    server: Cluster,
    admin: httpx.AsyncClient,
    listener: Listener,
    database_url_of_server: str,
) -> None:
    tenant, key = await member(server, admin, "thief")
    names = ["PLAIT_ADMIN_KEY", "PLAIT_DATABASE_URL"]
    for secret_set in [names] if place != "model_key" else [[name] for name in names]:
        tag = unique("exploit")
        text = spec(place, tag, f"{listener.url}/{tag}", secret_set)
        # A version stored before the check (or by hand): its run refuses the names.
        stored = store_directly(database_url_of_server, tenant, text)
        async with client(server, key) as thief:
            ended = await run_to_end(thief, stored)
        assert "__error__" in ended, ended
        assert secret_set[0] in ended["__error__"]["message"], ended
        received = "\n".join(listener.under(tag))
        for value in settings_of_server(database_url_of_server):
            assert value not in received, f"{place} delivered a setting of the server"

        # An upload naming them is refused at the line, for a member and for the admin.
        for uploader in (key, ADMIN_KEY):
            async with client(server, uploader) as http_client:
                other = text.replace(tag, unique("upload"))
                refused = await http_client.post("/graphs", json={"yaml": other})
            assert refused.status_code == 422, refused.text
            errors = refused.json()["errors"]
            codes = {error["code"] for error in errors}
            assert codes == {"secret-reserved"}, errors
            assert all(error["line"] > 1 for error in errors)
