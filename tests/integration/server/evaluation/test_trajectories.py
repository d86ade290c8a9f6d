"""Trajectories and scores over HTTP: a run with a tool call and an approval, exported whole,
in order, with its tenant's secret masked; as JSON Lines a client reads line by line; and
never to another tenant."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from plait.server.auth.store import create_key, create_tenant
from plait.server.auth.tenant_secrets import set_secret
from tests.integration.server.evaluation.conftest import SPECS_DIR
from tests.integration.server.harness import PLAIT, client_of, running_app
from tests.polling import until

ADMIN_KEY = "plait_admin_evaluation_tests"
TOKEN = "tok-9f3e-SECRET-d41c"


@pytest.fixture(scope="module")
async def app(evaluation_database_url: str) -> AsyncIterator[FastAPI]:
    """The app with two in-process workers, keys on, on the package's database."""
    async with running_app(
        evaluation_database_url, SPECS_DIR, workers=2, admin_key=ADMIN_KEY
    ) as application:
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """The default tenant's client (the operator's key)."""
    async with client_of(app, ADMIN_KEY) as http:
        yield http


async def _ship(client: httpx.AsyncClient, app: FastAPI) -> tuple[str, str, str]:
    """Run eval-traced to its approval, approve it, wait for the resumed run to end.

    Returns the thread and the two runs (the one that asked, the one that resumed).
    """
    pool = app.state.services.pool
    await set_secret(pool, "default", "SHOP_TOKEN", TOKEN)
    thread_id = (await client.post("/threads", json={})).json()["thread_id"]
    first = await client.post(
        f"/threads/{thread_id}/runs/wait",
        json={
            "assistant_id": "eval-traced",
            "input": {"order_id": "B-7", "note": f"the courier asked for {TOKEN}"},
        },
    )
    assert first.status_code == 200, first.text
    [approval] = (await client.get("/approvals", params={"thread_id": thread_id})).json()
    decided = await client.post(
        f"/approvals/{approval['approval_id']}/decision",
        json={"decision": "approve", "comment": "fine", "actor": "alice"},
    )
    assert decided.status_code == 200, decided.text
    second = decided.json()["run"]["run_id"]
    joined = await client.get(f"/threads/{thread_id}/runs/{second}/join")
    assert joined.status_code == 200, joined.text
    listed = (await client.get(f"/threads/{thread_id}/runs")).json()
    run_ids = [run["run_id"] for run in reversed(listed)]  # the list is newest first
    assert run_ids[1] == second
    return thread_id, run_ids[0], second


async def test_a_runs_trajectory_holds_every_step_in_order_with_secrets_masked(
    client: httpx.AsyncClient, app: FastAPI, grader_calls: Path
) -> None:
    thread_id, asked, resumed = await _ship(client, app)

    first = await client.get(f"/threads/{thread_id}/runs/{asked}/trajectory")
    assert first.status_code == 200, first.text
    assert TOKEN not in first.text
    data = first.json()
    assert (data["run_id"], data["graph"], data["version"]) == (asked, "eval-traced", "1.0.0")
    # It stopped on the approval (status success, as the Agent Server has it).
    assert data["status"] == "success"
    assert data["input"] == {
        "order_id": "B-7",
        "note": "the courier asked for [redacted:SHOP_TOKEN]",
    }
    assert [step["node"] for step in data["steps"]] == ["fetch", "review"]
    fetch, review = data["steps"]
    assert fetch["input"]["order_id"] == "B-7"
    assert fetch["output"]["order"]["fetched_with"] == "[redacted:SHOP_TOKEN]"
    [call] = fetch["tool_calls"]
    assert (call["tool"], call["args"], call["status"]) == ("lookup", {"order_id": "B-7"}, "ok")
    # The approval it asked for, with the decision made since.
    assert review["interrupts"][0]["value"]["action"] == "ship_order"
    [asked_for] = review["approvals"]
    assert asked_for["status"] == "approved"
    assert asked_for["decided_by"].startswith("alice")
    assert asked_for["resume_run_id"] == resumed

    second = (await client.get(f"/threads/{thread_id}/runs/{resumed}/trajectory")).json()
    assert second["state"] == "succeeded"
    assert second["command"]["resume"]
    assert [step["node"] for step in second["steps"]] == ["review", "finish"]
    review, finish = second["steps"]
    assert review["output"]["decision"]["decision"] == "approve"
    assert review["approvals"][0]["decision"]["comment"] == "fine"
    assert finish["output"] == {"outcome": "order B-7 shipped (approve)"}
    assert second["output"] == {"outcome": "order B-7 shipped (approve)"}
    assert [step["index"] for step in second["steps"]] == [0, 1]

    # Only the run that finished is graded (the one waiting on a person is not finished).
    async def graded() -> Any:
        body = (await client.get(f"/runs/{resumed}/scores")).json()
        return body if body["scores"] and body["scores"][0]["status"] != "pending" else None

    body = await until(graded, "the resumed run's score")
    [score] = body["scores"]
    assert (score["grader"], score["status"], score["score"]) == ("steady", "scored", 0.5)
    assert (await client.get(f"/runs/{asked}/scores")).json()["scores"] == []
    listed = (await client.get(f"/threads/{thread_id}/runs")).json()
    assert {run["run_id"]: len(run["plait_scores"]) for run in listed} == {resumed: 1, asked: 0}
    summary = (await client.get("/graphs/eval-traced/scores")).json()
    [line] = summary["scores"]
    assert (line["version"], line["grader"], line["mean"]) == ("1.0.0", "steady", 0.5)
    assert line["count"] >= 1
    metrics = (await client.get("/metrics")).text
    assert 'plait_run_scores_count{grader="steady",graph="eval-traced",version="1.0.0"}' in metrics


async def test_a_graphs_runs_stream_as_json_lines(client: httpx.AsyncClient, app: FastAPI) -> None:
    _, asked, resumed = await _ship(client, app)

    lines: list[dict[str, Any]] = []
    async with client.stream("GET", "/graphs/eval-traced/trajectories") as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/x-ndjson"
        async for line in response.aiter_lines():
            if line:
                lines.append(json.loads(line))
    run_ids = [line["run_id"] for line in lines]
    # Oldest first: this test's two runs come last, in the order they ran.
    assert run_ids[-2:] == [asked, resumed]
    assert all(line["graph"] == "eval-traced" and line["steps"] for line in lines)
    assert all(TOKEN not in json.dumps(line) for line in lines)

    later = lines[-1]["created_at"]
    since = await client.get("/graphs/eval-traced/trajectories", params={"since": later})
    assert [json.loads(line)["run_id"] for line in since.text.splitlines()] == [resumed]
    other = await client.get("/graphs/eval-traced/trajectories", params={"version": "9.9.9"})
    assert (other.status_code, other.text) == (200, "")


async def test_another_tenants_run_is_not_exportable(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    thread_id, asked, _ = await _ship(client, app)
    pool = app.state.services.pool
    await create_tenant(pool, "eval-outsider")
    _, key = await create_key(pool, "eval-outsider")
    async with client_of(app, key) as outsider:
        for path in (f"/threads/{thread_id}/runs/{asked}/trajectory", f"/runs/{asked}/scores"):
            theirs = await outsider.get(path)
            free = await outsider.get(path.replace(asked, "0f0f0f0f-aaaa-4bbb-8ccc-000000000000"))
            assert theirs.status_code == free.status_code == 404
            assert theirs.headers["content-type"] == "application/problem+json"
        listed = await outsider.get("/graphs/eval-traced/trajectories")
        assert (listed.status_code, listed.text) == (200, "")
        assert (await outsider.get("/graphs/eval-traced/scores")).json()["scores"] == []


async def test_plait_export_trajectories_writes_json_lines(
    client: httpx.AsyncClient, app: FastAPI, evaluation_database_url: str, tmp_path: Path
) -> None:
    _, asked, resumed = await _ship(client, app)
    target = tmp_path / "runs.jsonl"
    env = {**os.environ, "PLAIT_DATABASE_URL": evaluation_database_url}
    command = [*PLAIT, "export", "trajectories", "eval-traced", "--output", str(target)]
    done = await asyncio.to_thread(
        subprocess.run, [*command, "--specs", str(SPECS_DIR)], env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()
    lines = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert [line["run_id"] for line in lines][-2:] == [asked, resumed]
    assert TOKEN not in target.read_text(encoding="utf-8")
    assert f"{len(lines)} run(s) of eval-traced exported" in done.stderr.decode()
    refused = await asyncio.to_thread(
        subprocess.run, [*command, "--since", "yesterday"], env=env, capture_output=True
    )
    assert refused.returncode == 2 and b"--since" in refused.stderr
