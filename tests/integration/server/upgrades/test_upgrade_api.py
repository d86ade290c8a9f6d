"""Upgrading a parked thread through a declared migration (decision 95), over the API of
``plait serve`` (the app with two in-process workers): parked on an approval on 1.0.0,
upgraded to 1.1.0 (a renamed field, a computed one, a renamed node), then approved in the
inbox, it finishes on 1.1.0 with the mapped state. Without a migration the 409 says what
to declare; a running thread and another tenant's thread are refused.

The app runs on a database of its own with an admin key (keys made here would end
single-user mode for every other test on a shared database).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from fastapi import FastAPI

from tests.conftest import fresh_database
from tests.integration.cli.conftest import REPO, plait_env
from tests.integration.server.api.conftest import assert_problem
from tests.integration.server.harness import client_of, running_app

pytestmark = pytest.mark.postgres

HERE = Path(__file__).parent
GRAPH = "upgrade-demo"
ADMIN_KEY = "admin-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def own_database(postgres_server_url: str) -> Iterator[str]:
    with fresh_database(postgres_server_url) as url:
        yield url


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The app's specs folder, with ``upgrade-demo`` 1.0.0."""
    folder = tmp_path_factory.mktemp("upgrade-specs")
    shutil.copy(HERE / "specs" / "upgrade-demo.yaml", folder / "upgrade-demo.yaml")
    return folder


@pytest.fixture(scope="module")
async def app(own_database: str, specs: Path) -> AsyncIterator[FastAPI]:
    """The app (two in-process workers) on the specs folder."""
    async with running_app(own_database, specs, workers=2, admin_key=ADMIN_KEY) as application:
        yield application


@pytest.fixture(scope="module")
async def admin(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """The admin key's client (tenant ``default``), with 1.0.1 and 1.1.0 published."""
    async with client_of(app, ADMIN_KEY) as http:
        for version in ("1.0.1", "1.1.0"):
            text = (HERE / "versions" / f"upgrade-demo-{version}.yaml").read_text("utf-8")
            published = await http.post(
                "/graphs", content=text, headers={"content-type": "application/yaml"}
            )
            assert published.status_code == 201, published.text
        yield http


async def _timers(database: str, thread: str) -> list[tuple[str, str, str, str]]:
    """The thread's timers: (interrupt id, node, version, status)."""
    async with await psycopg.AsyncConnection.connect(database) as conn:
        cursor = await conn.execute(
            "SELECT interrupt_id, node, version, status FROM plait_timers WHERE thread_id = %s",
            (thread,),
        )
        return list(await cursor.fetchall())


async def _plait(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``plait ARGS`` in a child process on the app's database."""
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "plait.server.cli.app", *args],
        cwd=REPO,
        env=plait_env(url),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def _parked(http: httpx.AsyncClient) -> tuple[str, dict[str, Any]]:
    """A new thread parked on 1.0.0's approval; its id and the approval."""
    thread = str(uuid.uuid4())
    parked = await http.post(
        f"/threads/{thread}/runs/wait",
        json={
            "assistant_id": f"{GRAPH}@1.0.0",
            "input": {"customer": "Ada", "amount": 12},
            "if_not_exists": "create",
        },
    )
    assert parked.status_code == 200, parked.text
    assert parked.json()["__interrupt__"]
    inbox = (await http.get("/approvals", params={"status": "pending"})).json()
    [approval] = [item for item in inbox if item["thread_id"] == thread]
    return thread, approval


async def test_parked_thread_upgraded_then_approved(
    admin: httpx.AsyncClient, own_database: str
) -> None:
    thread, approval = await _parked(admin)
    assert (approval["version"], approval["node"]) == ("1.0.0", "review")

    upgraded = await admin.post(
        f"/threads/{thread}/upgrade", json={"version": "1.1.0", "actor": "ops@example.com"}
    )
    assert upgraded.status_code == 200, upgraded.text
    report = upgraded.json()
    assert (report["from"], report["to"], report["migration"]) == (
        "1.0.0",
        "1.1.0",
        ">=1.0.0 <1.1.0",
    )
    assert report["written"] == ["amount_cents", "client"]
    assert report["approvals"] == 1
    [new_interrupt] = report["interrupts"].values()

    shown = (await admin.get(f"/threads/{thread}")).json()
    assert (shown["version"], shown["status"]) == ("1.1.0", "interrupted")
    assert shown["values"]["client"] == "Ada"
    assert shown["values"]["amount_cents"] == 1200
    assert "customer" not in shown["values"]
    [task_interrupts] = shown["interrupts"].values()
    assert task_interrupts[0]["id"] == new_interrupt
    assert task_interrupts[0]["value"]["node"] == "approve_refund"
    state = (await admin.get(f"/threads/{thread}/state")).json()
    assert state["next"] == ["approve_refund"]

    moved = (await admin.get(f"/approvals/{approval['approval_id']}")).json()
    assert (moved["version"], moved["node"], moved["status"]) == (
        "1.1.0",
        "approve_refund",
        "pending",
    )
    assert await _timers(own_database, thread) == [
        (new_interrupt, "approve_refund", "1.1.0", "pending")
    ]  # the approval's expiry fires on the moved interrupt
    decided = await admin.post(
        f"/approvals/{approval['approval_id']}/decision", json={"decision": "approve"}
    )
    assert decided.status_code == 200, decided.text
    assert await _timers(own_database, thread) == [
        (new_interrupt, "approve_refund", "1.1.0", "cancelled")
    ]
    run = decided.json()["run"]
    joined = (await admin.get(f"/threads/{thread}/runs/{run['run_id']}/join")).json()
    assert joined["summary"] == "Ada 1200 approve"
    assert joined["reply"] == "closed by 1.1.0"
    finished = (await admin.get(f"/threads/{thread}")).json()
    assert (finished["version"], finished["status"]) == ("1.1.0", "idle")
    assert (await admin.get(f"/threads/{thread}/runs/{run['run_id']}")).json()["status"] == (
        "success"
    )
    async with await psycopg.AsyncConnection.connect(own_database) as conn:
        cursor = await conn.execute(
            "SELECT actor, detail FROM plait_audit WHERE thread_id = %s AND kind = 'upgrade'",
            (thread,),
        )
        [(actor, detail)] = await cursor.fetchall()
    assert actor.startswith("ops@example.com")
    assert (detail["from"], detail["to"], detail["graph"]) == ("1.0.0", "1.1.0", GRAPH)


async def test_an_idle_thread_keeps_its_state_and_runs_the_new_version(
    admin: httpx.AsyncClient,
) -> None:
    thread, approval = await _parked(admin)
    decided = await admin.post(
        f"/approvals/{approval['approval_id']}/decision", json={"decision": "reject"}
    )
    run = decided.json()["run"]
    await admin.get(f"/threads/{thread}/runs/{run['run_id']}/join")
    assert (await admin.get(f"/threads/{thread}")).json()["status"] == "idle"

    upgraded = await admin.post(f"/threads/{thread}/upgrade", json={"version": "1.1.0"})
    assert upgraded.status_code == 200, upgraded.text
    assert upgraded.json()["interrupts"] == {}
    shown = (await admin.get(f"/threads/{thread}")).json()
    assert (shown["version"], shown["status"]) == ("1.1.0", "idle")
    assert shown["values"]["decision"]["decision"] == "reject"  # kept: same name
    assert (shown["values"]["client"], shown["values"]["amount_cents"]) == ("Ada", 1200)

    parked = await admin.post(
        f"/threads/{thread}/runs/wait",
        json={"assistant_id": f"{GRAPH}@1.1.0", "input": {"client": "Bo", "amount_cents": 5}},
    )
    assert parked.status_code == 200, parked.text
    [interrupt] = parked.json()["__interrupt__"]
    assert interrupt["value"]["node"] == "approve_refund"
    assert interrupt["value"]["arguments"] == {"client": "Bo", "amount_cents": 5}


async def test_without_a_migration_the_409_names_what_to_declare(
    admin: httpx.AsyncClient,
) -> None:
    thread, _approval = await _parked(admin)
    resumed = await admin.post(
        f"/threads/{thread}/runs/wait",
        json={"assistant_id": f"{GRAPH}@1.0.1", "command": {"resume": {"decision": "approve"}}},
    )
    detail = assert_problem(resumed, 409)["detail"]
    assert "thread-spec-mismatch" in resumed.json()["type"]
    assert 'migrations: [{from: "1.0.0"' in detail and "upgrade-demo@1.0.1" in detail

    refused = await admin.post(f"/threads/{thread}/upgrade", json={"version": "1.0.1"})
    body = assert_problem(refused, 409)
    assert body["type"].endswith("migration-missing")
    assert 'migrations: [{from: "1.0.0"' in body["detail"]
    assert (await admin.get(f"/threads/{thread}")).json()["version"] == "1.0.0"
    # With a migration declared, the run's 409 says to upgrade first.
    resumed = await admin.post(
        f"/threads/{thread}/runs/wait",
        json={"assistant_id": f"{GRAPH}@1.1.0", "command": {"resume": {"decision": "approve"}}},
    )
    assert "upgrade the thread first" in assert_problem(resumed, 409)["detail"]
    missing = await admin.post(f"/threads/{thread}/upgrade", json={"version": "9.9.9"})
    assert_problem(missing, 404)


async def test_another_tenant_cannot_upgrade_your_thread(
    app: FastAPI, admin: httpx.AsyncClient
) -> None:
    thread, _approval = await _parked(admin)
    tenant = f"t-{uuid.uuid4().hex[:10]}"
    assert (await admin.post("/tenants", json={"tenant_id": tenant})).status_code == 201
    key = (await admin.post(f"/tenants/{tenant}/keys", json={"role": "member"})).json()["key"]
    async with client_of(app, key) as other:
        refused = await other.post(f"/threads/{thread}/upgrade", json={"version": "1.1.0"})
        free = await other.post(f"/threads/{uuid.uuid4()}/upgrade", json={"version": "1.1.0"})
    assert_problem(refused, 404)
    assert_problem(free, 404)
    assert refused.json()["detail"].replace(thread, "ID") == free.json()["detail"].replace(
        free.request.url.path.split("/")[2], "ID"
    )
    assert (await admin.get(f"/threads/{thread}")).json()["version"] == "1.0.0"


async def test_plait_upgrade_then_a_resume_by_interrupt_id(
    admin: httpx.AsyncClient, own_database: str, specs: Path
) -> None:
    thread, _approval = await _parked(admin)
    upgraded = await _plait(
        own_database, "upgrade", thread, "--to", "1.1.0", "--specs", str(specs), "--actor", "ops"
    )
    assert upgraded.returncode == 0, upgraded.stderr
    report = json.loads(upgraded.stdout)
    assert (report["thread_id"], report["from"], report["to"]) == (thread, "1.0.0", "1.1.0")
    [new_interrupt] = report["interrupts"].values()
    finished = await admin.post(
        f"/threads/{thread}/runs/wait",
        json={
            "assistant_id": f"{GRAPH}@1.1.0",
            "command": {"resume": {new_interrupt: {"decision": "reject"}}},
        },
    )
    assert finished.status_code == 200, finished.text
    assert finished.json()["summary"] == "Ada 1200 reject"
    again = await _plait(own_database, "upgrade", thread, "--to", "1.0.1")
    assert again.returncode == 2
    assert "declares no migration from 1.1.0" in again.stderr


async def test_a_node_the_thread_waits_on_must_exist_or_be_renamed(
    admin: httpx.AsyncClient,
) -> None:
    text = (HERE / "versions" / "upgrade-demo-1.1.0.yaml").read_text("utf-8")
    text = text.replace('version: "1.1.0"', 'version: "1.2.0"').replace(
        "      nodes: {review: approve_refund}\n", ""
    )
    published = await admin.post(
        "/graphs", content=text, headers={"content-type": "application/yaml"}
    )
    assert published.status_code == 201, published.text
    thread, _approval = await _parked(admin)
    refused = await admin.post(f"/threads/{thread}/upgrade", json={"version": "1.2.0"})
    body = assert_problem(refused, 409)
    assert body["type"].endswith("no-node")
    assert "waits on node `review`" in body["detail"]
    assert "`nodes: {review: <new node id>}`" in body["detail"]
    shown = (await admin.get(f"/threads/{thread}")).json()
    assert (shown["version"], shown["values"]["customer"]) == ("1.0.0", "Ada")
