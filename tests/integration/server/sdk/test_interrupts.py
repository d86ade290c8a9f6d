"""An approval interrupt: the run stops, the thread waits, ``command.resume`` finishes it."""

from __future__ import annotations

import httpx
from langgraph_sdk.client import LangGraphClient

from tests.integration.server.harness import Cluster
from tests.integration.server.sdk.helpers import collect, events_named

REFUND = {"order_id": "A-1002", "amount": 180.0, "reason": "Item arrived broken"}


async def test_interrupt_then_resume_with_command(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    parts = await collect(
        client.runs.stream(tid, "refund-approval", input=REFUND, stream_mode="updates")
    )
    assert [p.event for p in parts][-1] == "end"
    updates = events_named(parts, "updates")
    interrupts = [u["__interrupt__"] for u in updates if "__interrupt__" in u]
    assert len(interrupts) == 1 and len(interrupts[0]) == 1
    pending = interrupts[0][0]
    assert pending["id"]
    assert pending["value"]["action"] == "issue_refund"
    assert pending["value"]["arguments"] == {"order_id": "A-1002", "amount": 180.0}
    assert pending["value"]["node"] == "approve"

    first_run = await client.runs.get(tid, parts[0].data["run_id"])
    assert first_run["status"] == "success"  # a run that stops on interrupt() succeeded
    waiting = await client.threads.get(tid)
    assert waiting["status"] == "interrupted"
    state = await client.threads.get_state(tid)
    assert state["next"] == ["approve"]
    assert [i["id"] for task in state["tasks"] for i in task["interrupts"]] == [pending["id"]]

    resumed = await collect(
        client.runs.stream(
            tid,
            "refund-approval",
            command={"resume": {"decision": "approve", "comment": "photos confirm it"}},
            stream_mode="values",
        )
    )
    assert [p.event for p in resumed][-1] == "end"
    final = events_named(resumed, "values")[-1]
    assert final["decision"] == {
        "decision": "approve",
        "arguments": {"order_id": "A-1002", "amount": 180.0},
        "comment": "photos confirm it",
    }
    assert final["refund"]["status"] == "issued"
    assert final["refund"]["amount"] == 180.0
    done = await client.threads.get(tid)
    assert done["status"] == "idle"
    assert (await client.threads.get_state(tid))["next"] == []


async def test_resume_with_runs_wait_rejects_the_refund(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    stopped = await client.runs.wait(tid, "refund-approval", input=REFUND)
    assert stopped["refund"] is None  # stopped before the refund
    assert (await client.threads.get(tid))["status"] == "interrupted"
    final = await client.runs.wait(
        tid,
        "refund-approval",
        command={"resume": {"decision": "reject", "comment": "returned after 90 days"}},
    )
    assert final["refund"]["status"] == "declined"
    assert "returned after 90 days" in final["outcome"]
    assert (await client.threads.get(tid))["status"] == "idle"


async def test_approvals_inbox_decision_resumes_the_thread(
    sdk_server: Cluster, client: LangGraphClient
) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    await client.runs.wait(tid, "refund-approval", input=REFUND)
    async with httpx.AsyncClient(base_url=sdk_server.url, timeout=30.0) as http:
        inbox = (await http.get("/approvals", params={"thread_id": tid})).raise_for_status()
        [parked] = inbox.json()
        assert parked["status"] == "pending"
        assert (parked["graph"], parked["node"], parked["action"]) == (
            "refund-approval",
            "approve",
            "issue_refund",
        )
        assert parked["arguments"] == {"order_id": "A-1002", "amount": 180.0}
        decision = {
            "decision": "edit",
            "arguments": {"order_id": "A-1002", "amount": 90.0},
            "comment": "half",
            "actor": "ops@example.com",
        }
        answer = await http.post(f"/approvals/{parked['approval_id']}/decision", json=decision)
        body = answer.raise_for_status().json()
        assert body["approval"]["status"] == "edited"
        assert body["approval"]["decided_by"] == "ops@example.com"
        final = await client.runs.join(tid, body["run"]["run_id"])
        assert final["refund"]["amount"] == 90.0
        again = await http.post(f"/approvals/{parked['approval_id']}/decision", json=decision)
        assert again.status_code == 409  # decided once only
        assert again.headers["content-type"].startswith("application/problem+json")
    assert (await client.threads.get(tid))["status"] == "idle"
