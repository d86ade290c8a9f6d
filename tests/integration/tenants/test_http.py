"""Tenants over HTTP against a real ``plait serve``: keys, scoping, admin routes, budgets.

The server runs with ``PLAIT_ADMIN_KEY``, so every API request needs a key.
Tenants and their keys are made through the admin API; the tenants' own
requests go through the LangGraph SDK with ``api_key=``.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Any

import httpx
import psycopg
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from tests.conftest import fresh_database
from tests.integration.server.harness import SPECS, Cluster, cluster
from tests.integration.server.queue.conftest import spec_text
from tests.integration.tenants.conftest import SPECS_DIR, unique

pytestmark = pytest.mark.postgres

ADMIN_KEY = "admin-" + uuid.uuid4().hex
SPEC_SOURCES = [
    SPECS_DIR / "tenant-steps.yaml",
    SPECS_DIR / "tenant-breaker.yaml",
    SPECS_DIR / "tenant_fns.py",
    SPECS / "refund-approval.yaml",
    SPECS / "plait_examples",
]
REFUND_HIGH = {"order_id": "A-1002", "amount": 180.0, "reason": "Item arrived broken"}


@pytest.fixture(scope="module")
def database_url_of_server(postgres_server_url: str) -> Iterator[str]:
    """The server's own database (the tests read its tables directly)."""
    with fresh_database(postgres_server_url) as url:
        yield url


@pytest.fixture(scope="module")
def server(
    database_url_of_server: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """``plait serve`` with an admin key (so keys are required) and in-process workers."""
    with cluster(
        database_url_of_server,
        tmp_path_factory.mktemp("tenants-server"),
        SPEC_SOURCES,
        extra_env={"PLAIT_ADMIN_KEY": ADMIN_KEY},
    ) as running:
        yield running


@pytest.fixture
async def admin(server: Cluster) -> AsyncIterator[httpx.AsyncClient]:
    """Plain HTTP with the admin key."""
    async with httpx.AsyncClient(
        base_url=server.url, headers={"x-api-key": ADMIN_KEY}, timeout=30.0
    ) as http:
        yield http


async def new_tenant(admin: httpx.AsyncClient, prefix: str, **limits: Any) -> tuple[str, str]:
    """A tenant with one member key: ``(tenant_id, key)``."""
    tenant = unique(prefix)
    created = await admin.post("/tenants", json={"tenant_id": tenant, **limits})
    assert created.status_code == 201, created.text
    key = await admin.post(f"/tenants/{tenant}/keys", json={"role": "member", "name": "test"})
    assert key.status_code == 201, key.text
    return tenant, key.json()["key"]


def sdk(server: Cluster, key: str) -> LangGraphClient:
    """The LangGraph SDK acting with ``key``."""
    return get_client(url=server.url, api_key=key, timeout=60.0)


async def refused(call: Awaitable[Any]) -> None:
    """``call`` fails with 404 (the SDK raises ``NotFoundError``, or plain httpx on /wait)."""
    with pytest.raises(httpx.HTTPStatusError) as caught:
        await call
    assert caught.value.response.status_code == 404, caught.value.response.text


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """The problem+json body of an error response with ``status``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["detail"]
    return body


async def test_requests_without_a_valid_key_get_401(server: Cluster) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        body = problem(await http.get("/threads/x"), 401)
        assert "x-api-key" in body["detail"]
        problem(await http.post("/threads/search", json={}), 401)
        problem(await http.get("/threads/x", headers={"x-api-key": "plait_nope_nope"}), 401)
        # Health stays open for load balancers and the harness.
        assert (await http.get("/readyz")).status_code == 200


async def test_keys_are_stored_hashed(
    admin: httpx.AsyncClient, database_url_of_server: str
) -> None:
    tenant, key = await new_tenant(admin, "hash")
    with psycopg.connect(database_url_of_server) as conn:
        rows = conn.execute("SELECT * FROM plait_api_keys WHERE tenant_id = %s", (tenant,))
        stored = [str(value) for row in rows.fetchall() for value in row]
    assert stored, "the key was not stored"
    assert all(key not in value for value in stored)
    assert hashlib.sha256(key.encode()).hexdigest() in stored
    listed = (await admin.get(f"/tenants/{tenant}/keys")).json()
    assert len(listed) == 1 and key not in str(listed)
    assert key.startswith(listed[0]["prefix"])


async def test_member_keys_cannot_manage_tenants(server: Cluster, admin: httpx.AsyncClient) -> None:
    tenant, key = await new_tenant(admin, "member")
    async with httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key}) as http:
        problem(await http.get("/tenants"), 403)
        problem(await http.post("/tenants", json={"tenant_id": unique("x")}), 403)
        problem(await http.post(f"/tenants/{tenant}/keys", json={"role": "admin"}), 403)
        problem(await http.get("/breakers"), 403)
        # ... but they do read their own usage.
        usage = await http.get("/usage")
        assert usage.status_code == 200 and usage.json()["tenant_id"] == tenant


async def test_a_revoked_key_stops_working(server: Cluster, admin: httpx.AsyncClient) -> None:
    tenant, key = await new_tenant(admin, "revoke")
    async with httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key}) as http:
        assert (await http.post("/threads/search", json={})).status_code == 200
        key_id = (await admin.get(f"/tenants/{tenant}/keys")).json()[0]["key_id"]
        revoked = await admin.delete(f"/tenants/{tenant}/keys/{key_id}")
        assert revoked.status_code == 200 and revoked.json()["revoked_at"]
        # The revoking process forgets its cache at once (others within the cache TTL).
        body = problem(await http.post("/threads/search", json={}), 401)
        assert "revoked" in body["detail"]


async def test_another_tenants_thread_run_graph_and_approval_answer_404(
    server: Cluster, admin: httpx.AsyncClient
) -> None:
    _, key_a = await new_tenant(admin, "acme")
    _, key_b = await new_tenant(admin, "globex")
    async with sdk(server, key_a) as acme, sdk(server, key_b) as globex:
        # Acme runs a shared graph (the specs folder's) and one of its own.
        thread = await acme.threads.create()
        run = await acme.runs.create(thread["thread_id"], "tenant-steps", input={"text": "hi"})
        await acme.runs.join(thread["thread_id"], run["run_id"])
        finished = await acme.runs.get(thread["thread_id"], run["run_id"])
        assert finished["status"] == "success" and finished["usage"]["steps"] == 3
        private = unique("private")
        async with httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key_a}) as http_a:
            uploaded = await http_a.post(
                "/graphs", json={"yaml": spec_text(private, reply="private")}
            )
            assert uploaded.status_code == 201, uploaded.text
            assert (await http_a.get(f"/graphs/{private}/versions")).status_code == 200
        assert (await acme.assistants.get(private))["graph_id"] == private
        # A worker compiles the tenant's own version from the registry.
        ran = await acme.runs.wait(None, private, input={"text": "hi"})
        assert isinstance(ran, dict) and ran["reply"] == "private", ran

        # Acme parks a run on an approval.
        parked = await acme.threads.create()
        await acme.runs.wait(parked["thread_id"], "refund-approval", input=REFUND_HIGH)
        async with httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key_a}) as http_a:
            pending = await http_a.get("/approvals", params={"thread_id": parked["thread_id"]})
            approval_id = pending.json()[0]["approval_id"]

        # Globex sees none of it: every one answers 404, never 403.
        await refused(globex.threads.get(thread["thread_id"]))
        await refused(globex.runs.get(thread["thread_id"], run["run_id"]))
        await refused(globex.threads.get_state(thread["thread_id"]))
        await refused(globex.runs.create(thread["thread_id"], "tenant-steps", input={"text": "x"}))
        await refused(globex.assistants.get(private))
        await refused(globex.runs.wait(None, private, input={"text": "x"}))
        assert await globex.threads.search() == []
        async with httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key_b}) as http_b:
            problem(await http_b.get(f"/graphs/{private}/versions"), 404)
            problem(await http_b.get(f"/approvals/{approval_id}"), 404)
            problem(
                await http_b.post(
                    f"/approvals/{approval_id}/decision", json={"decision": "approve"}
                ),
                404,
            )
            assert (await http_b.get("/approvals")).json() == []
            problem(await http_b.get(f"/runs/{run['run_id']}/events"), 404)
            problem(
                await http_b.get(f"/threads/{thread['thread_id']}/runs/{run['run_id']}/stream"),
                404,
            )
            graphs = [item["name"] for item in (await http_b.get("/graphs")).json()]
            assert private not in graphs and "tenant-steps" in graphs  # shared, read-only

        # Acme still sees and decides its own.
        assert (await acme.threads.get(thread["thread_id"]))["thread_id"] == thread["thread_id"]
        async with httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key_a}) as http_a:
            decided = await http_a.post(
                f"/approvals/{approval_id}/decision",
                json={"decision": "reject", "actor": "alice"},
            )
            assert decided.status_code == 200, decided.text
            # The name is the client's word; the key that decided (id and name) is beside it.
            key_id = key_a.split("_")[1]
            assert decided.json()["approval"]["decided_by"] == f"alice (key:{key_id} 'test')"


async def test_tool_calls_are_audited_with_their_tenant(
    server: Cluster, admin: httpx.AsyncClient, database_url_of_server: str
) -> None:
    tenant, key = await new_tenant(admin, "audit")
    async with sdk(server, key) as client:
        thread = await client.threads.create()
        run = await client.runs.create(thread["thread_id"], "tenant-breaker", input={"note": "go"})
        await client.runs.join(thread["thread_id"], run["run_id"])
    with psycopg.connect(database_url_of_server) as conn:
        rows = conn.execute(
            "SELECT tenant, kind, tool, actor FROM plait_audit WHERE run_id = %s",
            (run["run_id"],),
        ).fetchall()
    assert rows and all(row[0] == tenant for row in rows), rows
    assert ("tool_call", "flaky", "node:call") in {row[1:] for row in rows}


async def test_breaker_state_is_visible_to_admins(
    server: Cluster, admin: httpx.AsyncClient
) -> None:
    _, key = await new_tenant(admin, "breaker")
    async with sdk(server, key) as client:
        thread = await client.threads.create()
        run = await client.runs.create(thread["thread_id"], "tenant-breaker", input={"note": "go"})
        await client.runs.join(thread["thread_id"], run["run_id"])
        finished = await client.runs.get(thread["thread_id"], run["run_id"])
        assert finished["status"] == "error"
    response = await admin.get("/breakers")
    assert response.status_code == 200, response.text
    breaker = response.json()["tool:tenant_fns:down"]
    assert breaker["state"] == "open"
    assert breaker["failures"] >= 1


async def test_a_daily_budget_stops_a_run_with_a_clear_reason(
    server: Cluster, admin: httpx.AsyncClient
) -> None:
    tenant, key = await new_tenant(admin, "thrifty", daily_max_steps=2)
    async with sdk(server, key) as client:
        thread = await client.threads.create()
        result = await client.runs.wait(
            thread["thread_id"], "tenant-steps", input={"text": "hi"}, raise_error=False
        )
        assert isinstance(result, dict) and "__error__" in result, result
        message = result["__error__"]["message"]
        assert "daily budget daily_max_steps=2 of tenant" in message, message
        assert tenant in message and "node 'third'" in message
        runs = await client.runs.list(thread["thread_id"])
        assert runs[0]["status"] == "error"
        state = await client.threads.get_state(thread["thread_id"])
        assert state["values"]["second"] and state["values"].get("third") is None
        # The next run of the day does not take a single step.
        other = await client.threads.create()
        again = await client.runs.wait(
            other["thread_id"], "tenant-steps", input={"text": "x"}, raise_error=False
        )
        assert "node 'first'" in again["__error__"]["message"]
    async with httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key}) as http:
        usage = (await http.get("/usage")).json()
    assert usage["steps"] == 2 and usage["tokens"] > 0
    assert usage["limits"] == {"daily_max_steps": 2}
    seen_by_admin = (await admin.get(f"/tenants/{tenant}/usage")).json()
    assert seen_by_admin["steps"] == 2
    # Raising the limit lets the tenant go on.
    patched = await admin.patch(f"/tenants/{tenant}", json={"daily_max_steps": 10})
    assert patched.json()["limits"]["daily_max_steps"] == 10
    async with sdk(server, key) as client:
        fresh = await client.threads.create()
        done = await client.runs.wait(fresh["thread_id"], "tenant-steps", input={"text": "x"})
        assert isinstance(done, dict) and done.get("third"), done


async def test_idempotency_keys_are_per_tenant(server: Cluster, admin: httpx.AsyncClient) -> None:
    _, key_a = await new_tenant(admin, "idem-a")
    _, key_b = await new_tenant(admin, "idem-b")
    same = {"Idempotency-Key": uuid.uuid4().hex}
    body = {"assistant_id": "tenant-steps", "input": {"text": "hi"}}
    created = []
    for key in (key_a, key_b, key_a):
        async with httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key}) as http:
            response = await http.post("/runs", json=body, headers=same)
            assert response.status_code == 200, response.text
            created.append(response.json())
    # Another tenant's same key is another request; the same tenant's is a replay.
    assert created[0]["run_id"] != created[1]["run_id"]
    assert created[0]["run_id"] == created[2]["run_id"]
    assert created[0]["thread_id"] != created[1]["thread_id"]


async def test_admin_requests_are_validated(admin: httpx.AsyncClient) -> None:
    tenant, _ = await new_tenant(admin, "valid")
    problem(await admin.post("/tenants", json={"tenant_id": tenant}), 409)
    problem(await admin.post("/tenants", json={"tenant_id": "Not Valid!"}), 422)
    problem(await admin.patch(f"/tenants/{tenant}", json={"max_running_runs": 0}), 422)
    problem(await admin.patch("/tenants/no-such-tenant", json={"name": "x"}), 404)
    problem(await admin.post("/tenants/no-such-tenant/keys", json={}), 404)
    problem(await admin.delete(f"/tenants/{tenant}/keys/nope"), 404)
    patched = await admin.patch(f"/tenants/{tenant}", json={"max_running_runs": 3})
    assert patched.json()["limits"]["max_running_runs"] == 3
    cleared = await admin.patch(f"/tenants/{tenant}", json={"max_running_runs": None})
    assert cleared.json()["limits"]["max_running_runs"] is None


CODE_SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata:
  name: {name}
  version: "1.0.0"
spec:
  state:
    text: {{type: string}}
  mcp_servers:
    shell: {{transport: stdio, command: sh}}
  nodes:
    first: {{kind: python, function: "{function}", output: text}}
  edges:
    - {{from: START, to: first}}
    - {{from: first, to: END}}
"""


async def test_a_tenant_spec_may_call_only_the_operators_code(
    server: Cluster, admin: httpx.AsyncClient
) -> None:
    _, key = await new_tenant(admin, "coder")
    async with httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key}) as http:
        name = unique("code")
        text = CODE_SPEC.format(name=name, function="os:system")
        body = problem(await http.post("/graphs", json={"yaml": text}), 422)
        refused = {(e["pointer"], e["line"]) for e in body["errors"]}
        assert refused == {
            ("/spec/nodes/first/function", 12),
            ("/spec/mcp_servers/shell/command", 10),
        }
        assert {e["code"] for e in body["errors"]} == {"tenant-code-refused"}
        assert "PLAIT_TENANT_MODULES" in body["errors"][0]["fix"] + body["errors"][1]["fix"]
        assert (await http.get(f"/graphs/{name}/versions")).status_code == 404

        # The specs folder's modules are the operator's reviewed code: allowed.
        allowed = (
            text.replace('"os:system"', '"tenant_fns:down"')
            .replace("    shell: {transport: stdio, command: sh}\n", "")
            .replace("  mcp_servers:\n", "")
        )
        assert (await http.post("/graphs", json={"yaml": allowed})).status_code == 201

    # The operator's own tenant is trusted with code.
    own = CODE_SPEC.format(name=unique("own"), function="os:getcwd")
    assert (await admin.post("/graphs", json={"yaml": own})).status_code == 201


def _same_answer(one: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """What differs between two created threads beyond their ids and times (empty: nothing)."""
    varying = {"thread_id", "created_at", "updated_at"}
    return {
        key: (one.get(key), other.get(key))
        for key in set(one) | set(other)
        if key not in varying and one.get(key) != other.get(key)
    }


async def test_another_tenants_thread_id_answers_as_a_free_id(
    server: Cluster, admin: httpx.AsyncClient
) -> None:
    acme_tenant, key_a = await new_tenant(admin, "acme")
    globex_tenant, key_b = await new_tenant(admin, "globex")
    taken, free = unique("order"), unique("order")
    async with (
        httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key_a}) as acme,
        httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key_b}) as globex,
    ):
        made = await acme.post("/threads", json={"thread_id": taken, "metadata": {"who": "a"}})
        assert made.status_code == 200, made.text
        assert made.json()["thread_id"] == taken
        problem(await acme.post("/threads", json={"thread_id": taken}), 409)  # its own

        # For globex the id acme holds is as free as one nobody holds, in every form.
        for if_exists in ("raise", "do_nothing"):
            answers = []
            for thread_id in (taken, free):
                body = {"thread_id": thread_id, "metadata": {"who": "b"}, "if_exists": if_exists}
                answer = await globex.post("/threads", json=body)
                assert answer.status_code == 200, answer.text
                assert answer.json()["thread_id"] == thread_id
                answers.append(answer.json())
            assert _same_answer(*answers) == {}
            taken, free = unique("order"), unique("order")
            made = await acme.post("/threads", json={"thread_id": taken})
            assert made.status_code == 200, made.text
        # Creating a run on it creates the tenant's own thread, as for a free id.
        for thread_id in (taken, free):
            ran = await globex.post(
                f"/threads/{thread_id}/runs/wait",
                json={"assistant_id": "tenant-steps", "input": {"text": "globex"}},
                params={},
            )
            assert ran.status_code == 404, ran.text  # no such thread yet, either way
            created = await globex.post(
                f"/threads/{thread_id}/runs/wait",
                json={
                    "assistant_id": "tenant-steps",
                    "input": {"text": "globex"},
                    "if_not_exists": "create",
                },
            )
            assert created.status_code == 200 and created.json()["text"] == "globex", created.text

        # The two threads of one id are apart: state, history, runs, checkpoints.
        ran = await acme.post(
            f"/threads/{taken}/runs/wait",
            json={"assistant_id": "tenant-steps", "input": {"text": "acme"}},
        )
        assert ran.status_code == 200, ran.text
        acme_state = (await acme.get(f"/threads/{taken}/state")).json()
        globex_state = (await globex.get(f"/threads/{taken}/state")).json()
        assert acme_state["values"]["text"] == "acme"
        assert globex_state["values"]["text"] == "globex"
        assert acme_state["checkpoint"]["thread_id"] == taken
        acme_runs = (await acme.get(f"/threads/{taken}/runs")).json()
        globex_runs = (await globex.get(f"/threads/{taken}/runs")).json()
        assert len(acme_runs) == 1 and len(globex_runs) == 1
        assert acme_runs[0]["run_id"] != globex_runs[0]["run_id"]
        history = (await acme.post(f"/threads/{taken}/history", json={"limit": 50})).json()
        assert {item["values"].get("text") for item in history} <= {"acme", None}
        searched = (await globex.post("/threads/search", json={"ids": [taken]})).json()
        assert [item["thread_id"] for item in searched] == [taken]
        assert searched[0]["metadata"]["graph_id"] == "tenant-steps"  # globex's own run made it

        # Nothing a tenant reads names the stored form of its ids.
        for response in (
            await acme.get(f"/threads/{taken}"),
            await acme.get(f"/threads/{taken}/state"),
            await acme.post(f"/threads/{taken}/history", json={"limit": 50}),
            await acme.get(f"/threads/{taken}/runs"),
            await acme.get(f"/threads/{taken}/runs/{acme_runs[0]['run_id']}"),
            await acme.post("/threads/search", json={}),
        ):
            assert response.status_code == 200, response.text
            assert f"{acme_tenant}/" not in response.text
            assert globex_tenant not in response.text
        located = await acme.post(
            f"/threads/{taken}/runs", json={"assistant_id": "tenant-steps", "input": {"text": "x"}}
        )
        assert located.headers["content-location"].startswith(f"/threads/{taken}/runs/")

        # A client's id cannot hold the separator.
        body = problem(await acme.post("/threads", json={"thread_id": f"{globex_tenant}/x"}), 422)
        assert "/" in body["detail"]


async def test_a_tenants_draft_obeys_its_code_policy_and_is_its_own(
    server: Cluster, admin: httpx.AsyncClient
) -> None:
    _, key_a = await new_tenant(admin, "drafter")
    _, key_b = await new_tenant(admin, "peeker")
    name = unique("draft")
    text = CODE_SPEC.format(name=name, function="os:system")
    async with (
        httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key_a}) as http_a,
        httpx.AsyncClient(base_url=server.url, headers={"x-api-key": key_b}) as http_b,
    ):
        body = problem(await http_a.post("/drafts", json={"yaml": text}), 422)
        assert {e["code"] for e in body["errors"]} == {"tenant-code-refused"}

        allowed = (
            text.replace('"os:system"', '"tenant_fns:down"')
            .replace("    shell: {transport: stdio, command: sh}\n", "")
            .replace("  mcp_servers:\n", "")
        )
        created = await http_a.post("/drafts", json={"yaml": allowed})
        assert created.status_code == 201, created.text
        draft = created.json()
        ran = await http_a.post(
            "/runs/wait", json={"assistant_id": draft["assistant_id"], "input": {"text": "Hi"}}
        )
        assert ran.status_code == 200, ran.text
        assert "down()" in ran.json()["__error__"]["message"]  # the draft's own code ran

        # Another tenant's draft answers as an unknown assistant would.
        problem(await http_b.get(f"/assistants/{draft['assistant_id']}"), 404)
        problem(
            await http_b.post(
                "/runs/wait", json={"assistant_id": draft["assistant_id"], "input": {"text": "x"}}
            ),
            404,
        )
        problem(await http_b.get(f"/graphs/{name}/versions/{draft['version']}"), 404)
