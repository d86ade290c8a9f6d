"""The thread protocol routes are tenant-scoped like every thread route: another
tenant's thread of the same id is never seen, and a key is needed."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.integration.server.harness import Cluster
from tests.integration.tenants.test_http import (  # noqa: F401 (fixtures)
    admin,
    database_url_of_server,
    new_tenant,
    server,
)

pytestmark = pytest.mark.postgres


@pytest.fixture
async def http(server: Cluster) -> AsyncIterator[httpx.AsyncClient]:  # noqa: F811
    async with httpx.AsyncClient(base_url=server.url, timeout=60.0) as opened:
        yield opened


async def _command(
    http: httpx.AsyncClient, key: str, tid: str, method: str, params: dict[str, Any]
) -> httpx.Response:
    return await http.post(
        f"/threads/{tid}/commands",
        json={"id": 1, "method": method, "params": params},
        headers={"x-api-key": key},
    )


async def test_another_tenants_thread_is_not_seen(
    admin: httpx.AsyncClient,  # noqa: F811
    http: httpx.AsyncClient,
) -> None:
    _, owner = await new_tenant(admin, "stream-owner")
    _, other = await new_tenant(admin, "stream-other")
    tid = str(uuid.uuid4())
    started = await _command(
        http, owner, tid, "run.start", {"assistant_id": "tenant-steps", "input": {"text": "a"}}
    )
    assert started.status_code == 200, started.text
    run_id = started.json()["result"]["run_id"]
    joined = await http.get(f"/threads/{tid}/runs/{run_id}/join", headers={"x-api-key": owner})
    assert joined.json()["text"] == "a" and joined.json()["third"]

    # The same id, another tenant: as if nobody had it.
    stream = await http.post(
        f"/threads/{tid}/stream/events", json={"channels": ["values"]}, headers={"x-api-key": other}
    )
    assert stream.status_code == 404
    state = await _command(http, other, tid, "state.get", {"namespace": []})
    assert state.status_code == 404 and state.json()["error"] == "no_such_run"
    # Its own run.start makes a thread of its own, which the owner's run is not on.
    mine = await _command(
        http, other, tid, "run.start", {"assistant_id": "tenant-steps", "input": {"text": "b"}}
    )
    assert mine.status_code == 200, mine.text
    runs = await http.get(f"/threads/{tid}/runs", headers={"x-api-key": other})
    assert [run["run_id"] for run in runs.json()] == [mine.json()["result"]["run_id"]]

    # No key: 401, as on every API route.
    assert (
        await http.post(f"/threads/{tid}/commands", json={"id": 1, "method": "state.get"})
    ).status_code == 401
