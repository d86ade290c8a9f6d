"""``/tool-limits`` per tenant: each tenant sees, pauses and resumes only its own tools' limits.

The app runs in process with an admin key (so every request needs a key) and
no workers; the calls holding slots are taken through the store, as a
worker's gateway takes them.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from plait.engine.store import tool_limits
from plait.engine.store.pool import Pool
from plait.engine.store.tool_limits import KeyLimit
from tests.integration.server.harness import client_of, running_app

pytestmark = pytest.mark.postgres

ADMIN_KEY = "admin-" + uuid.uuid4().hex
KEY = "tool:billing:charge"


@pytest.fixture
async def app(empty_database_url: str, tmp_path: Path) -> AsyncIterator[FastAPI]:
    async with running_app(
        empty_database_url, tmp_path, workers=0, admin_key=ADMIN_KEY
    ) as application:
        yield application


async def _tenant_key(admin: httpx.AsyncClient, tenant: str) -> str:
    (await admin.post("/tenants", json={"tenant_id": tenant})).raise_for_status()
    made = await admin.post(f"/tenants/{tenant}/keys", json={"role": "member"})
    return str(made.raise_for_status().json()["key"])


async def test_each_tenant_sees_pauses_and_resumes_only_its_own_tool_limits(app: FastAPI) -> None:
    pool: Pool = app.state.services.pool
    async with client_of(app, ADMIN_KEY) as admin:
        acme = client_of(app, await _tenant_key(admin, "acme"))
        globex = client_of(app, await _tenant_key(admin, "globex"))
    limit = (KeyLimit(KEY, concurrency=2),)
    call = str(uuid.uuid4())
    taken = await tool_limits.take(
        pool, call, "acme", limit, tool="charge", run_id=None, node="pay", lease_seconds=30
    )
    assert taken.granted

    async with acme, globex:
        [seen] = (await acme.get("/tool-limits")).json()
        assert (seen["key"], seen["concurrency"], seen["in_flight"]) == (KEY, 2, 1)
        assert (await globex.get("/tool-limits")).json() == []

        refused = await globex.post("/tool-limits/pause", json={"key": KEY, "seconds": 60})
        assert refused.status_code == 404
        assert refused.headers["content-type"] == "application/problem+json"
        paused = await acme.post(
            "/tool-limits/pause", json={"key": KEY, "seconds": 60, "reason": "the bank is down"}
        )
        assert paused.status_code == 200, paused.text
        assert paused.json()["paused_reason"] == "the bank is down"
        assert paused.json()["paused_until"] is not None
        metrics = (await acme.get("/metrics")).text
        assert f'plait_tool_paused{{key="{KEY}",tenant="acme"}} 1.0' in metrics, metrics
        assert f'plait_tool_calls_in_flight{{key="{KEY}",tenant="acme"}} 1.0' in metrics

        # Paused: a call of acme waits for the pause's end; globex's own key is not held.
        held = await tool_limits.take(
            pool,
            str(uuid.uuid4()),
            "acme",
            limit,
            tool="charge",
            run_id=None,
            node="pay",
            lease_seconds=30,
        )
        assert (held.granted, held.reason) == (False, "paused")
        assert held.wait_seconds is not None and 59 < held.wait_seconds <= 60
        other = await tool_limits.take(
            pool,
            str(uuid.uuid4()),
            "globex",
            limit,
            tool="charge",
            run_id=None,
            node="pay",
            lease_seconds=30,
        )
        assert other.granted

        resumed = await acme.post("/tool-limits/resume", json={"key": KEY})
        assert resumed.status_code == 200 and resumed.json()["paused_until"] is None
        [after] = (await acme.get("/tool-limits")).json()
        # The waiting call's row stays counted until it takes its turn or its lease ends.
        assert (after["in_flight"], after["waiting"]) == (1, 1)


async def test_an_operators_cap_tightens_what_the_spec_declares(app: FastAPI) -> None:
    pool: Pool = app.state.services.pool
    async with client_of(app, ADMIN_KEY) as admin:
        acme = client_of(app, await _tenant_key(admin, "acme"))
    declared = (KeyLimit(KEY, concurrency=2, rate="100/s", interval=0.01),)

    async def take(call: str | None = None) -> tool_limits.Turn:
        return await tool_limits.take(
            pool,
            call or str(uuid.uuid4()),
            "acme",
            declared,
            tool="charge",
            run_id=None,
            node="pay",
            lease_seconds=30,
        )

    async with acme:
        # A cap may come before any call: the key is created.
        capped = await acme.post("/tool-limits/caps", json={"key": KEY, "concurrency": 1})
        assert capped.status_code == 200, capped.text
        assert (capped.json()["cap_concurrency"], capped.json()["cap_rate"]) == (1, None)
        bad = await acme.post("/tool-limits/caps", json={"key": KEY, "rate": "10 per second"})
        assert bad.status_code == 422

        granted = str(uuid.uuid4())
        assert (await take(granted)).granted
        refused = await take()
        assert (refused.reason, refused.held_by, refused.set_by) == ("concurrency", "1", "operator")

        # A rate cap slower than the spec's (and no cap on slots: the spec's 2 hold again).
        await acme.post("/tool-limits/caps", json={"key": KEY, "rate": "2/s"})
        await tool_limits.release(pool, granted)
        # The first call's turn at the spec's 100/s may still hold a fast machine back, for
        # at most the 10 ms it spaces calls; the call waits what it is told, as a caller does.
        call = str(uuid.uuid4())
        first = await take(call)
        if not first.granted:
            assert first.wait_seconds is not None and first.wait_seconds <= 0.01, first
            await asyncio.sleep(first.wait_seconds)
            first = await take(call)
        assert first.granted
        paced = await take()
        assert (paced.reason, paced.held_by, paced.set_by) == ("rate", "2/s", "operator")
        assert paced.wait_seconds is not None and 0.4 < paced.wait_seconds <= 0.5
        [state] = (await acme.get("/tool-limits")).json()
        assert (state["cap_concurrency"], state["cap_rate"]) == (None, "2/s")
