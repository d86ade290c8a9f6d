"""One Plait graph calls another over A2A, through real HTTP on 127.0.0.1.

The caller (``a2a-expense-caller``, ``slow-caller``) and the served graphs
run on the same ``plait serve``; the ``a2a`` node reaches the served graph
through the server's own ``/a2a/<graph>/`` endpoint with a2a-sdk's client.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types.a2a_pb2 import GetTaskRequest, TaskState

from tests.integration.a2a.conftest import EXPENSE_AGENT, agent_base
from tests.integration.server.harness import Cluster
from tests.polling import until

pytestmark = pytest.mark.postgres


async def start_run(
    http: httpx.AsyncClient, assistant: str, values: dict[str, Any]
) -> dict[str, Any]:
    """A background run of ``assistant`` on a new thread."""
    thread = (await http.post("/threads", json={})).json()
    response = await http.post(
        f"/threads/{thread['thread_id']}/runs",
        json={"assistant_id": assistant, "input": values, "stream_mode": ["updates", "custom"]},
    )
    assert response.status_code == 200, response.text
    run: dict[str, Any] = response.json()
    return run


async def run_status(http: httpx.AsyncClient, run: dict[str, Any]) -> str:
    got = await http.get(f"/threads/{run['thread_id']}/runs/{run['run_id']}")
    return str(got.json()["status"])


async def ended(http: httpx.AsyncClient, run: dict[str, Any]) -> str:
    """Wait until the run ends; return its status."""

    async def check() -> str | None:
        status = await run_status(http, run)
        return status if status not in ("pending", "running") else None

    return str(await until(check, f"run {run['run_id']} to end"))


async def a2a_events(http: httpx.AsyncClient, run_id: str) -> list[dict[str, Any]]:
    """The run's custom events from the ``a2a`` node."""
    events = (await http.get(f"/runs/{run_id}/events")).json()
    return [
        e["data"]
        for e in events
        if e["event"] == "custom"
        and isinstance(e["data"], dict)
        and e["data"].get("plait") == "a2a"
    ]


async def test_a_small_claim_completes_through_the_remote_agent(
    a2a_server: Cluster, http: httpx.AsyncClient
) -> None:
    url = agent_base(a2a_server, EXPENSE_AGENT)
    run = await start_run(http, "a2a-expense-caller", {"agent_url": url, "request": "Taxi 42.50"})

    assert await ended(http, run) == "success"
    values = (await http.get(f"/threads/{run['thread_id']}/state")).json()["values"]
    remote = values["remote"]
    assert remote["state"] == "TASK_STATE_COMPLETED"
    assert remote["data"] == {"settlement": {"verdict": "paid", "amount": 42.5, "comment": None}}
    assert values["report"] == f"claim paid (remote task {remote['task_id']})"
    # The remote's updates streamed as the caller's custom events.
    events = await a2a_events(http, run["run_id"])
    assert events[0]["task_id"] == remote["task_id"]
    assert events[-1]["state"] == "TASK_STATE_COMPLETED"
    # The remote task is a thread of the served graph, finished.
    remote_runs = (await http.get(f"/threads/{remote['task_id']}/runs")).json()
    assert [r["status"] for r in remote_runs] == ["success"]


async def test_remote_input_required_is_an_approval_in_the_callers_inbox(
    a2a_server: Cluster, http: httpx.AsyncClient
) -> None:
    url = agent_base(a2a_server, EXPENSE_AGENT)
    run = await start_run(
        http, "a2a-expense-caller", {"agent_url": url, "request": "Team dinner 750"}
    )
    assert await ended(http, run) == "success"  # parked: the thread waits on an approval
    thread = (await http.get(f"/threads/{run['thread_id']}")).json()
    assert thread["status"] == "interrupted"

    inbox = (await http.get("/approvals", params={"thread_id": run["thread_id"]})).json()
    (approval,) = inbox
    assert approval["node"] == "file_claim"
    assert approval["action"] == f"reply to {url}"
    assert "Approval needed for pay_expense" in approval["reason"]
    remote_task = approval["arguments"]["task_id"]
    assert approval["arguments"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    # The remote task id was recorded before parking; the remote waits on its own approval.
    remote_inbox = (await http.get("/approvals", params={"thread_id": remote_task})).json()
    assert [a["status"] for a in remote_inbox] == ["pending"]

    decided = await http.post(
        f"/approvals/{approval['approval_id']}/decision",
        json={"decision": "approve", "comment": "team offsite", "actor": "ops@example.com"},
    )
    assert decided.status_code == 200, decided.text
    resume = decided.json()["run"]
    assert await ended(http, resume) == "success"

    values = (await http.get(f"/threads/{run['thread_id']}/state")).json()["values"]
    assert values["remote"]["task_id"] == remote_task  # the same remote task, continued
    assert values["remote"]["data"]["settlement"] == {
        "verdict": "paid",
        "amount": 750.0,
        "comment": "team offsite",
    }
    remote_inbox = (
        await http.get("/approvals", params={"thread_id": remote_task, "status": "all"})
    ).json()
    assert [(a["status"], a["decided_by"]) for a in remote_inbox] == [("approved", "a2a:anonymous")]
    # The message was sent once: one remote task for the whole conversation.
    remote_runs = (await http.get(f"/threads/{remote_task}/runs")).json()
    assert sorted(r["status"] for r in remote_runs) == ["success", "success"]


async def test_cancelling_the_caller_cancels_the_remote_task(
    a2a_server: Cluster, http: httpx.AsyncClient
) -> None:
    url = agent_base(a2a_server, "slow-agent")
    run = await start_run(http, "slow-caller", {"agent_url": url, "request": "take your time"})

    async def remote_task_id() -> str | None:
        for event in await a2a_events(http, run["run_id"]):
            if event.get("state") == "TASK_STATE_WORKING":
                return str(event["task_id"])
        return None

    task_id = await until(remote_task_id, "the remote task to start working")
    cancelled = await http.post(f"/threads/{run['thread_id']}/runs/{run['run_id']}/cancel")
    assert cancelled.status_code == 202, cancelled.text
    assert await ended(http, run) == "interrupted"

    client = await create_client(url, client_config=ClientConfig(httpx_client=http))

    async def remote_cancelled() -> bool:
        task = await client.get_task(GetTaskRequest(id=task_id))
        return task.status.state == TaskState.TASK_STATE_CANCELED

    await until(remote_cancelled, "the remote task to be cancelled")
    remote_runs = (await http.get(f"/threads/{task_id}/runs")).json()
    assert [r["status"] for r in remote_runs] == ["interrupted"]


async def test_a_remote_that_asks_twice_parks_the_caller_twice(
    a2a_server: Cluster, http: httpx.AsyncClient
) -> None:
    url = agent_base(a2a_server, "two-questions-agent")
    run = await start_run(http, "slow-caller", {"agent_url": url, "request": "the party"})
    assert await ended(http, run) == "success"

    answers = [("approve", "use_budget"), ("reject", "pick_vendor")]
    remote_task = None
    for decision, action in answers:
        (approval,) = (await http.get("/approvals", params={"thread_id": run["thread_id"]})).json()
        assert f"Approval needed for {action}" in approval["reason"]
        remote_task = remote_task or approval["arguments"]["task_id"]
        assert approval["arguments"]["task_id"] == remote_task  # one remote task throughout
        decided = await http.post(
            f"/approvals/{approval['approval_id']}/decision", json={"decision": decision}
        )
        assert decided.status_code == 200, decided.text
        assert await ended(http, decided.json()["run"]) == "success"

    values = (await http.get(f"/threads/{run['thread_id']}/state")).json()["values"]
    data = values["remote"]["data"]
    assert data["first"]["decision"] == "approve"
    assert data["second"]["decision"] == "reject"
    assert data["reply"] == {"echo": "the party"}
    remote = (
        await http.get("/approvals", params={"thread_id": remote_task, "status": "all"})
    ).json()
    assert sorted((a["action"], a["status"]) for a in remote) == [
        ("pick_vendor", "rejected"),
        ("use_budget", "approved"),
    ]
