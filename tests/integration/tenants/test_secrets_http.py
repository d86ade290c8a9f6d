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
import json
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from plait.engine.spec.loader import parse_spec
from plait.server.graphs.versions import assistant_id
from tests.conftest import fresh_database
from tests.integration.server.harness import Cluster, cluster
from tests.integration.tenants.conftest import SPECS_DIR, unique

pytestmark = pytest.mark.postgres

ADMIN_KEY = "admin-" + uuid.uuid4().hex
#: A variable of the server's environment: the operator's, readable only where opted in.
OPERATOR_TOKEN = "operator-env-" + uuid.uuid4().hex
#: The operator's own model key in the server's environment (its SDK's default variable).
OPERATOR_OPENAI_KEY = "sk-operator-" + uuid.uuid4().hex
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
            "OPENAI_API_KEY": OPERATOR_OPENAI_KEY,
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
        assert place == "model_key" and len(secrets) <= 1
        key = f"api_key_env: {secrets[0]}, " if secrets else ""
        body = (
            "  models:\n"
            f'    m: {{provider: openai, model: gpt-test, base_url: "{url}/v1", '
            f"{key}params: {{max_retries: 0}}}}\n"
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
        # A version stored before the check (or by hand): its run refuses the names,
        # for a member of another tenant and for the operator's own tenant alike.
        for owner, owner_key in ((tenant, key), ("default", ADMIN_KEY)):
            tag = unique("exploit")
            text = spec(place, tag, f"{listener.url}/{tag}", secret_set)
            stored = store_directly(database_url_of_server, owner, text)
            async with client(server, owner_key) as thief:
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


async def grant(admin: httpx.AsyncClient, tenant: str, name: str, value: str) -> None:
    """Grant ``tenant`` the secret ``name`` through the admin API."""
    granted = await admin.put(f"/tenants/{tenant}/secrets/{name}", json={"value": value})
    assert granted.status_code in (200, 201), granted.text
    assert value not in granted.text


@pytest.mark.parametrize("place", PLACES)
async def test_a_tenant_sends_its_own_secret_and_never_anothers(
    place: str,
    server: Cluster,
    admin: httpx.AsyncClient,
    listener: Listener,
    database_url_of_server: str,
) -> None:
    # The secret has the name of the operator's environment variable, which only
    # `default` may read (PLAIT_ENV_SECRETS): each tenant gets its own value.
    name = "OPERATOR_TOKEN"
    values: dict[str, str] = {}
    for prefix in ("acme", "globex"):
        tenant, key = await member(server, admin, prefix)
        values[tenant] = f"{prefix}-value-{uuid.uuid4().hex}"
        await grant(admin, tenant, name, values[tenant])
        tag = unique(prefix)
        async with client(server, key) as http_client:
            uploaded = await http_client.post(
                "/graphs", json={"yaml": spec(place, tag, f"{listener.url}/{tag}", [name])}
            )
            assert uploaded.status_code == 201, uploaded.text
            await run_to_end(http_client, tag)
        received = "\n".join(listener.under(tag))
        assert values[tenant] in received, f"{place}: the tenant's own secret did not arrive"
        others = [v for t, v in values.items() if t != tenant] + [OPERATOR_TOKEN]
        assert all(other not in received for other in others), f"{place}: another's secret"

    # The operator's own tenant reads the variable it opted in.
    tag = unique("operator")
    uploaded = await admin.post(
        "/graphs", json={"yaml": spec(place, tag, f"{listener.url}/{tag}", [name])}
    )
    assert uploaded.status_code == 201, uploaded.text
    await run_to_end(admin, tag)
    received = "\n".join(listener.under(tag))
    assert OPERATOR_TOKEN in received and all(v not in received for v in values.values())


@pytest.mark.parametrize("place", PLACES)
async def test_a_secret_not_granted_fails_with_one_error_that_reveals_nothing(
    place: str,
    server: Cluster,
    admin: httpx.AsyncClient,
    listener: Listener,
    database_url_of_server: str,
) -> None:
    tenant, key = await member(server, admin, "ungranted")
    other, _ = await member(server, admin, "holder")
    await grant(admin, other, "HELD_ELSEWHERE", "held-" + uuid.uuid4().hex)
    details: dict[str, tuple[str, str]] = {}
    # In the server's environment, in another tenant, nowhere: the same answer.
    for name in ("OPERATOR_TOKEN", "HELD_ELSEWHERE", "HELD_NOWHERE"):
        tag = unique("missing")
        text = spec(place, tag, f"{listener.url}/{tag}", [name])
        async with client(server, key) as http_client:
            refused = await http_client.post("/graphs", json={"yaml": text})
            assert refused.status_code == 422, refused.text
            errors = refused.json()["errors"]
            assert [error["code"] for error in errors] == ["secret-not-granted"], errors
            assert name in errors[0]["message"] and errors[0]["line"] > 1
            # The editor's check while typing says the same as the upload.
            checked = await http_client.post("/graphs/validate", json={"yaml": text})
            assert checked.status_code == 200, checked.text
            assert checked.json()["issues"] == errors
            stored = store_directly(database_url_of_server, tenant, text)
            ended = await run_to_end(http_client, stored)
        assert listener.under(tag) == []  # nothing was sent
        message = ended["__error__"]["message"]
        assert name in message, ended
        details[name] = (errors[0]["message"].replace(name, "X"), message.replace(name, "X"))
    assert len(set(details.values())) == 1, details


async def test_the_admin_api_grants_lists_and_deletes_without_returning_values(
    server: Cluster, admin: httpx.AsyncClient, listener: Listener, database_url_of_server: str
) -> None:
    tenant, key = await member(server, admin, "keeper")
    value = "kept-" + uuid.uuid4().hex
    first = await admin.put(f"/tenants/{tenant}/secrets/KEPT", json={"value": value})
    assert first.status_code == 201 and first.json()["name"] == "KEPT"
    again = await admin.put(f"/tenants/{tenant}/secrets/KEPT", json={"value": value + "2"})
    assert again.status_code == 200 and again.json()["created_at"] == first.json()["created_at"]
    listed = await admin.get(f"/tenants/{tenant}/secrets")
    assert [item["name"] for item in listed.json()] == ["KEPT"]
    assert value not in first.text + again.text + listed.text
    assert "warning" not in first.json()
    # Stored, but too short to be masked in run output: the answer says so, by name.
    short = await admin.put(f"/tenants/{tenant}/secrets/PIN", json={"value": "7x"})
    assert short.status_code == 201
    assert short.json()["warning"].startswith("secret PIN is 2 character(s) long: values shorter")
    assert "7x" not in short.text
    assert (await admin.delete(f"/tenants/{tenant}/secrets/PIN")).status_code == 204

    # Refused: Plait's own names and values, an unknown tenant, a member key.
    for path, body, status in [
        (f"/tenants/{tenant}/secrets/PLAIT_DATABASE_URL", {"value": "x"}, 422),
        (f"/tenants/{tenant}/secrets/COPY", {"value": ADMIN_KEY}, 422),
        (f"/tenants/{tenant}/secrets/COPY", {"value": database_url_of_server}, 422),
        (f"/tenants/{tenant}/secrets/bad-name", {"value": "x"}, 422),
        (f"/tenants/{tenant}/secrets/EMPTY", {"value": ""}, 422),
        ("/tenants/no-such-tenant/secrets/KEPT", {"value": "x"}, 404),
    ]:
        answer = await admin.put(path, json=body)
        assert answer.status_code == status, (path, answer.text)
        assert answer.headers["content-type"] == "application/problem+json"
        assert ADMIN_KEY not in answer.text
    async with client(server, key) as member_client:
        assert (await member_client.get(f"/tenants/{tenant}/secrets")).status_code == 403
        assert (
            await member_client.put(f"/tenants/{tenant}/secrets/MINE", json={"value": "x"})
        ).status_code == 403

    # Granted, the run sends the newest value; deleted, the next run fails naming it.
    tag = unique("kept")
    text = spec("python_tool", tag, f"{listener.url}/{tag}", ["KEPT"])
    async with client(server, key) as http_client:
        assert (await http_client.post("/graphs", json={"yaml": text})).status_code == 201
        await run_to_end(http_client, tag)
        assert value + "2" in "\n".join(listener.under(tag))
        assert (await admin.delete(f"/tenants/{tenant}/secrets/KEPT")).status_code == 204
        assert (await admin.delete(f"/tenants/{tenant}/secrets/KEPT")).status_code == 404
        ended = await run_to_end(http_client, tag)
    assert "KEPT" in ended["__error__"]["message"]
    assert (await admin.get(f"/tenants/{tenant}/secrets")).json() == []


STDIO_SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {{name: {name}, version: "1.0.0"}}
spec:
  secrets: [{secret}]
  state: {{out: {{}}}}
  mcp_servers:
    probe:
      transport: stdio
      command: python
      args: [-m, secret_hook, --flag]
      env: {{GIVEN: literal-value}}
      secrets: [{secret}]
  tools:
    environment: {{kind: mcp, server: probe}}
  nodes:
    call: {{kind: tool, tool: environment, output: out}}
  edges:
    - {{from: START, to: call}}
    - {{from: call, to: END}}
"""


async def test_a_stdio_server_of_the_default_tenant_gets_no_plait_setting(
    admin: httpx.AsyncClient, database_url_of_server: str
) -> None:
    for secret in ("PLAIT_ADMIN_KEY", "PLAIT_DATABASE_URL"):
        refused = await admin.post(
            "/graphs", json={"yaml": STDIO_SPEC.format(name=unique("stdio"), secret=secret)}
        )
        assert refused.status_code == 422, refused.text
        assert {error["code"] for error in refused.json()["errors"]} == {"secret-reserved"}

    name = unique("stdio")
    uploaded = await admin.post(
        "/graphs", json={"yaml": STDIO_SPEC.format(name=name, secret="OPERATOR_TOKEN")}
    )
    assert uploaded.status_code == 201, uploaded.text
    ended = await run_to_end(admin, name)
    seen = ended["out"]
    assert seen["env"]["GIVEN"] == "literal-value"
    assert seen["env"]["OPERATOR_TOKEN"] == OPERATOR_TOKEN  # default's opt-in
    assert [key for key in seen["env"] if key.upper().startswith("PLAIT_")] == []
    everything = json.dumps(seen)
    for value in settings_of_server(database_url_of_server):
        assert value not in everything


async def test_a_model_without_api_key_env_never_gets_the_servers_own_key(
    server: Cluster, admin: httpx.AsyncClient, listener: Listener
) -> None:
    _, key = await member(server, admin, "keyless")
    for uploader in (key, ADMIN_KEY):
        tag = unique("keyless")
        async with client(server, uploader) as http_client:
            uploaded = await http_client.post(
                "/graphs", json={"yaml": spec("model_key", tag, f"{listener.url}/{tag}", [])}
            )
            assert uploaded.status_code == 201, uploaded.text
            await run_to_end(http_client, tag)
        received = "\n".join(listener.under(tag))
        assert "Bearer plait-no-key" in received, received
        assert OPERATOR_OPENAI_KEY not in received


AUDITED_SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {{name: {name}, version: '1.0.0'}}
spec:
  secrets: [OPERATOR_TOKEN]
  audit: {{model_calls: {audited}}}
  state:
    note: {{type: string}}
    answer: {{type: string}}
  models:
    m:
      provider: scripted
      script:
        - content: "Noted. Never paste a key into a chat."
  agents:
    researcher: {{model: m, system: "You read what the user sends."}}
  nodes:
    read:
      kind: agent
      agent: researcher
      prompt: "{{{{ state.note }}}}"
      output: answer
  edges:
    - {{from: START, to: read}}
    - {{from: read, to: END}}
"""


async def test_model_calls_are_audited_with_the_tenants_secrets_masked(
    server: Cluster, admin: httpx.AsyncClient
) -> None:
    """Opted in: what the model saw and said is in the run's audit trail, with the tenant's
    secret (pasted by the user into the prompt) masked; only the tenant reads it."""
    tenant, key = await member(server, admin, "audited")
    value = f"audited-value-{uuid.uuid4().hex}"
    await grant(admin, tenant, "OPERATOR_TOKEN", value)
    _, other_key = await member(server, admin, "nosy")
    async with client(server, key) as http_client, client(server, other_key) as other:
        runs = {}
        for audited in ("true", "false"):
            name = unique(f"audited-{audited}")
            text = AUDITED_SPEC.format(name=name, audited=audited)
            uploaded = await http_client.post("/graphs", json={"yaml": text})
            assert uploaded.status_code == 201, uploaded.text
            thread = (await http_client.post("/threads", json={})).json()["thread_id"]
            note = f"here is my key: {value}"
            body = {"assistant_id": name, "input": {"note": note}}
            created = await http_client.post(f"/threads/{thread}/runs", json=body)
            assert created.status_code == 200, created.text
            run_id = created.json()["run_id"]
            await http_client.get(f"/threads/{thread}/runs/{run_id}/join")
            runs[audited] = run_id

        trail = await http_client.get(f"/runs/{runs['true']}/audit")
        assert trail.status_code == 200, trail.text
        [call] = [record for record in trail.json() if record["kind"] == "model_call"]
        assert (call["node"], call["actor"]) == ("read", "agent:researcher")
        detail = call["detail"]
        assert (detail["model"], detail["agent_role"]) == ("m", "researcher")
        assert [m["type"] for m in detail["messages"]] == ["system", "human"]
        assert detail["messages"][1]["content"] == "here is my key: [redacted:OPERATOR_TOKEN]"
        assert detail["reply"]["content"] == "Noted. Never paste a key into a chat."
        assert value not in trail.text

        # Not opted in: no model call is kept. Another tenant: no such run.
        plain = await http_client.get(f"/runs/{runs['false']}/audit")
        assert plain.status_code == 200 and plain.json() == []
        hidden = await other.get(f"/runs/{runs['true']}/audit")
        assert hidden.status_code == 404
        assert hidden.headers["content-type"].startswith("application/problem+json")
