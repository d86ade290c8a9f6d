"""A graph's rollout over Plait's API (decision 90): set, show, promote, roll back, end;
the refusals as problem JSON; new threads by the bare name follow it and named
versions do not; ``/metrics`` shows the share and the runs started per version;
each tenant sees only its own rollout.

The app runs in process on a database of its own with an admin key (keys made
here would end single-user mode for every other test on a shared database).
"""

from __future__ import annotations

import asyncio
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import fresh_database
from tests.integration.server.api.conftest import assert_problem
from tests.integration.server.harness import client_of, running_app
from tests.integration.server.rollout.metrics_text import samples

pytestmark = pytest.mark.postgres

HERE = Path(__file__).parent
GRAPH = "rollout-demo"
NEWER = (HERE / "versions" / "rollout-demo-1.1.0.yaml").read_text(encoding="utf-8")
ADMIN_KEY = "admin-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def own_database(postgres_server_url: str) -> Iterator[str]:
    with fresh_database(postgres_server_url) as url:
        yield url


@pytest.fixture(scope="module")
async def app(
    own_database: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FastAPI]:
    """The app (two in-process workers) with ``rollout-demo`` 1.0.0 in its folder."""
    specs = tmp_path_factory.mktemp("rollout-specs")
    shutil.copy(HERE / "specs" / "rollout-demo.yaml", specs / "rollout-demo.yaml")
    async with running_app(own_database, specs, workers=2, admin_key=ADMIN_KEY) as application:
        yield application


@pytest.fixture(scope="module")
async def admin(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """The admin key's client (tenant ``default``), with 1.1.0 published."""
    async with client_of(app, ADMIN_KEY) as http:
        published = await http.post(
            "/graphs", content=NEWER, headers={"content-type": "application/yaml"}
        )
        assert published.status_code == 201, published.text
        yield http


async def _run(http: httpx.AsyncClient, assistant: str, thread: str | None = None) -> str:
    """A run on a new thread (or ``thread``) to its end; the version that answered."""
    thread = thread or str(uuid.uuid4())
    response = await http.post(
        f"/threads/{thread}/runs/wait",
        json={"assistant_id": assistant, "input": {"park": False}, "if_not_exists": "create"},
    )
    assert response.status_code == 200, response.text
    reply = response.json()["reply"]
    assert isinstance(reply, str)
    return reply.removeprefix("answered by ")


async def _put(http: httpx.AsyncClient, **body: Any) -> httpx.Response:
    return await http.put(f"/graphs/{GRAPH}/rollout", json=body)


async def test_set_show_promote_rollback_and_end(admin: httpx.AsyncClient) -> None:
    empty = await admin.get(f"/graphs/{GRAPH}/rollout")
    assert empty.status_code == 200, empty.text
    assert empty.json() | {"versions": []} == {
        "graph": GRAPH,
        "stable": None,
        "canary": None,
        "share": 0,
        "updated_at": None,
        "window_hours": 24,
        "versions": [],
    }

    started = await _put(admin, canary="1.1.0", share=25)
    assert started.status_code == 200, started.text
    # No stable named and none before: the newest version other than the canary.
    assert started.json() | {"updated_at": None} == {
        "graph": GRAPH,
        "stable": "1.0.0",
        "canary": "1.1.0",
        "share": 25,
        "updated_at": None,
    }
    shown = (await admin.get(f"/graphs/{GRAPH}/rollout")).json()
    assert (shown["stable"], shown["canary"], shown["share"]) == ("1.0.0", "1.1.0", 25)

    promoted = await admin.post(f"/graphs/{GRAPH}/rollout/promote")
    assert promoted.status_code == 200, promoted.text
    assert (promoted.json()["stable"], promoted.json()["canary"], promoted.json()["share"]) == (
        "1.1.0",
        None,
        0,
    )
    again = assert_problem(await admin.post(f"/graphs/{GRAPH}/rollout/promote"), 409)
    assert again["type"] == "urn:plait:problem:rollout-no-canary"
    assert_problem(await admin.post(f"/graphs/{GRAPH}/rollout/rollback"), 409)

    # A canary of the older version (going back by canary), then rolled back.
    assert (await _put(admin, canary="1.0.0", share=10)).json()["stable"] == "1.1.0"
    rolled = await admin.post(f"/graphs/{GRAPH}/rollout/rollback")
    assert rolled.status_code == 200, rolled.text
    assert (rolled.json()["stable"], rolled.json()["canary"], rolled.json()["share"]) == (
        "1.1.0",
        None,
        0,
    )

    assert (await admin.delete(f"/graphs/{GRAPH}/rollout")).status_code == 204
    assert_problem(await admin.delete(f"/graphs/{GRAPH}/rollout"), 404)
    assert_problem(await admin.post(f"/graphs/{GRAPH}/rollout/promote"), 404)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"canary": "1.1.0", "share": 101}, "share must be a percentage from 0 to 100, not 101"),
        ({"canary": "1.1.0", "share": -1}, "not -1"),
        ({"canary": "9.9.9", "share": 5}, "no published version '9.9.9' for canary"),
        ({"stable": "0.1.0"}, "no published version '0.1.0' for stable"),
        ({"stable": "1.1.0", "canary": "1.1.0", "share": 5}, "both 1.1.0"),
        ({"canary": "1.1.0"}, "say which share"),
        ({"stable": "1.0.0", "share": 20}, "a share needs a canary"),
    ],
)
async def test_bad_rollouts_are_problems_and_change_nothing(
    admin: httpx.AsyncClient, body: dict[str, Any], says: str
) -> None:
    problem = assert_problem(await _put(admin, **body), 422)
    assert problem["type"] == "urn:plait:problem:rollout-invalid"
    assert says in problem["detail"]
    assert (await admin.get(f"/graphs/{GRAPH}/rollout")).json()["stable"] is None


async def test_unknown_graph_is_404(admin: httpx.AsyncClient) -> None:
    assert_problem(await admin.get("/graphs/no-such-graph/rollout"), 404)
    assert_problem(
        await admin.put("/graphs/no-such-graph/rollout", json={"canary": "1.0.0", "share": 5}),
        404,
    )


async def test_new_threads_follow_the_rollout_and_metrics_show_it(
    admin: httpx.AsyncClient,
) -> None:
    assert (await _put(admin, stable="1.0.0", canary="1.1.0", share=100)).status_code == 200
    try:
        assert await _run(admin, GRAPH) == "1.1.0"
        # A named version wins over the rollout.
        assert await _run(admin, f"{GRAPH}@1.0.0") == "1.0.0"
        # A thread pinned to 1.0.0 stays on it under the bare name.
        pinned = str(uuid.uuid4())
        assert await _run(admin, f"{GRAPH}@1.0.0", pinned) == "1.0.0"
        assert await _run(admin, GRAPH, pinned) == "1.0.0"
        await admin.put(f"/graphs/{GRAPH}/rollout", json={"stable": "1.0.0"})
        assert await _run(admin, GRAPH) == "1.0.0"  # a stable version without canary

        shown = (await admin.get(f"/graphs/{GRAPH}/rollout")).json()
        by_version = {item["version"]: item for item in shown["versions"]}
        assert by_version["1.1.0"]["role"] is None  # no longer in the rollout
        assert by_version["1.0.0"]["role"] == "stable"
        assert (by_version["1.1.0"]["runs"], by_version["1.0.0"]["runs"]) == (1, 4)
        assert by_version["1.0.0"]["threads"] == 3

        await _put(admin, stable="1.0.0", canary="1.1.0", share=30)
        text = (await admin.get("/metrics")).text
        assert _sample(text, "plait_rollout_canary_share", tenant="default", graph=GRAPH) == (
            {"tenant": "default", "graph": GRAPH, "stable": "1.0.0", "canary": "1.1.0"},
            30.0,
        )
        started = {
            (labels["version"], labels["rollout"]): value
            for labels, value in samples(text, "plait_runs_started_total", graph=GRAPH)
        }
        assert started[("1.1.0", "canary")] >= 1
        assert started[("1.0.0", "none")] >= 3
        assert started[("1.0.0", "stable")] >= 1
    finally:
        await admin.delete(f"/graphs/{GRAPH}/rollout")


async def test_stateless_runs_and_crons_new_threads_follow_the_rollout(
    admin: httpx.AsyncClient,
) -> None:
    # The older version as the canary for all: what the newest would not give.
    assert (await _put(admin, stable="1.1.0", canary="1.0.0", share=100)).status_code == 200
    try:
        listed = {item["name"]: item for item in (await admin.get("/graphs")).json()}
        assert listed[GRAPH]["rollout"] | {"updated_at": None} == {
            "graph": GRAPH,
            "stable": "1.1.0",
            "canary": "1.0.0",
            "share": 100,
            "updated_at": None,
        }
        stateless = await admin.post(
            "/runs/wait", json={"assistant_id": GRAPH, "input": {"park": False}}
        )
        assert stateless.status_code == 200, stateless.text
        assert stateless.json()["reply"] == "answered by 1.0.0"

        cron = await admin.post(
            "/runs/crons",
            json={
                "assistant_id": GRAPH,
                "schedule": "* * * * * *",
                "input": {"park": False},
                "on_run_completed": "keep",
            },
        )
        assert cron.status_code == 200, cron.text
        cron_id = cron.json()["cron_id"]
        try:
            threads = await _cron_threads(admin, cron_id)
        finally:
            await admin.delete(f"/runs/crons/{cron_id}")
        canary_assistant = (await admin.get(f"/assistants/{GRAPH}@1.0.0")).json()["assistant_id"]
        for thread in threads:
            runs = (await admin.get(f"/threads/{thread}/runs")).json()
            assert {run["assistant_id"] for run in runs} == {canary_assistant}
    finally:
        await admin.delete(f"/graphs/{GRAPH}/rollout")


async def _cron_threads(http: httpx.AsyncClient, cron_id: str) -> list[str]:
    """The threads of the cron's first runs, once one exists (the cron fires every second
    in a worker: polled, with a deadline)."""
    marker = {"plait_cron": {"cron_id": cron_id, "on_run_completed": "keep"}}
    async with asyncio.timeout(30):
        while True:
            found = await http.post("/threads/search", json={"metadata": marker})
            threads = [item["thread_id"] for item in found.json() if item["status"] == "idle"]
            if threads:
                return threads
            await asyncio.sleep(0.2)


async def test_a_tenant_sees_and_changes_only_its_own_rollout(
    app: FastAPI, admin: httpx.AsyncClient
) -> None:
    keys = []
    for _ in range(2):
        tenant = f"t-{uuid.uuid4().hex[:10]}"
        assert (await admin.post("/tenants", json={"tenant_id": tenant})).status_code == 201
        made = await admin.post(f"/tenants/{tenant}/keys", json={"role": "member"})
        keys.append(made.json()["key"])
    async with client_of(app, keys[0]) as first, client_of(app, keys[1]) as second:
        # The folder's graph and its published versions are every tenant's to roll out.
        assert (await _put(first, stable="1.0.0", canary="1.1.0", share=100)).status_code == 200
        assert (await second.get(f"/graphs/{GRAPH}/rollout")).json()["canary"] is None
        assert (await admin.get(f"/graphs/{GRAPH}/rollout")).json()["canary"] is None
        assert_problem(await second.post(f"/graphs/{GRAPH}/rollout/promote"), 404)
        assert await _run(first, GRAPH) == "1.1.0"
        assert await _run(second, GRAPH) == "1.1.0"  # no rollout: the newest
        await _put(second, stable="1.0.0")
        assert await _run(second, GRAPH) == "1.0.0"
        assert await _run(first, GRAPH) == "1.1.0"
        # Runs counted are the tenant's own.
        counted = (await second.get(f"/graphs/{GRAPH}/rollout")).json()["versions"]
        assert {(item["version"], item["runs"]) for item in counted} == {
            ("1.1.0", 1),
            ("1.0.0", 1),
        }


def _sample(text: str, name: str, **match: str) -> tuple[dict[str, str], float]:
    found = samples(text, name, **match)
    assert len(found) == 1, (name, match, found)
    return found[0]
