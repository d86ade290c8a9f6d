"""Tenants' keys apply to A2A: a card needs a key, and a task is its tenant's alone."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types.a2a_pb2 import GetTaskRequest, TaskState
from a2a.utils.errors import TaskNotFoundError

from plait.engine.compiler import compile_spec
from plait.engine.run.events import Completed, Failed, RunEvent
from plait.engine.run.runner import new_thread_id, run_graph
from plait.engine.spec.loader import load_spec
from plait.engine.store.pool import Pool
from tests.integration.a2a.conftest import EXPENSE_AGENT, SPEC_SOURCES, TEST_SPECS, agent_base
from tests.integration.a2a.helpers import drain, task_id_of, user_text
from tests.integration.server.harness import Cluster, fresh_cluster

pytestmark = pytest.mark.postgres

ADMIN_KEY = "admin-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def keyed_server(
    postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """``plait serve`` with an admin key, so every request needs ``x-api-key``."""
    with fresh_cluster(
        postgres_server_url,
        tmp_path_factory.mktemp("a2a-keyed"),
        SPEC_SOURCES,
        extra_env={"PLAIT_ADMIN_KEY": ADMIN_KEY},
    ) as running:
        yield running


@pytest.fixture
async def admin(keyed_server: Cluster) -> AsyncIterator[httpx.AsyncClient]:
    offsets = keyed_server.log_sizes()
    async with httpx.AsyncClient(
        base_url=keyed_server.url, headers={"x-api-key": ADMIN_KEY}, timeout=30.0
    ) as http:
        yield http
    keyed_server.print_logs(since=offsets)


async def member_key(admin: httpx.AsyncClient) -> str:
    """A new tenant's member key."""
    tenant = f"a2a-{uuid.uuid4().hex[:10]}"
    assert (await admin.post("/tenants", json={"tenant_id": tenant})).status_code == 201
    key = await admin.post(f"/tenants/{tenant}/keys", json={"role": "member", "name": "a2a"})
    assert key.status_code == 201, key.text
    return str(key.json()["key"])


async def test_a_task_is_only_its_tenants(keyed_server: Cluster, admin: httpx.AsyncClient) -> None:
    base = agent_base(keyed_server, EXPENSE_AGENT)
    anonymous = await admin.get(
        f"/a2a/{EXPENSE_AGENT}/.well-known/agent-card.json", headers={"x-api-key": ""}
    )
    assert anonymous.status_code == 401
    assert anonymous.headers["content-type"].startswith("application/problem+json")

    first, second = await member_key(admin), await member_key(admin)
    async with (
        httpx.AsyncClient(headers={"x-api-key": first}, timeout=30.0) as first_http,
        httpx.AsyncClient(headers={"x-api-key": second}, timeout=30.0) as second_http,
    ):
        mine = await create_client(base, client_config=ClientConfig(httpx_client=first_http))
        theirs = await create_client(base, client_config=ClientConfig(httpx_client=second_http))
        task_id = task_id_of(await drain(mine.send_message(user_text("Taxi 12"))))

        found = await mine.get_task(GetTaskRequest(id=task_id))
        assert found.status.state == TaskState.TASK_STATE_COMPLETED
        with pytest.raises(TaskNotFoundError):
            await theirs.get_task(GetTaskRequest(id=task_id))
        # The run is the first tenant's thread, invisible to the second.
        assert (await first_http.get(f"{keyed_server.url}/threads/{task_id}")).status_code == 200
        assert (await second_http.get(f"{keyed_server.url}/threads/{task_id}")).status_code == 404


async def run_to_end(name: str, pool: Pool, values: dict[str, object]) -> RunEvent:
    """Run a test spec in-process (as ``plait run`` does); return its last event."""
    compiled = compile_spec(load_spec(TEST_SPECS / f"{name}.yaml"))
    last: RunEvent | None = None
    async with contextlib.aclosing(run_graph(compiled, pool, new_thread_id(), input=values)) as run:
        async for event in run:
            last = event
    assert last is not None
    return last


async def test_the_a2a_node_sends_its_key_from_a_secret(
    keyed_server: Cluster,
    admin: httpx.AsyncClient,
    pool: Pool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = await member_key(admin)
    values = {"agent_url": agent_base(keyed_server, EXPENSE_AGENT), "request": "Taxi 8"}

    monkeypatch.setenv("AGENT_KEY", "plait_wrong_key")
    refused = await run_to_end("keyed-caller", pool, values)
    assert isinstance(refused, Failed)
    assert "401" in refused.error
    assert "plait_wrong_key" not in refused.error  # the secret is redacted from errors

    monkeypatch.setenv("AGENT_KEY", key)
    done = await run_to_end("keyed-caller", pool, values)
    assert isinstance(done, Completed), done
    assert done.output["remote"]["data"]["settlement"]["verdict"] == "paid"
