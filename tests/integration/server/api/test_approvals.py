"""The approvals inbox: a parked approval, a decision that resumes the thread."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.integration.server.api.conftest import REFUND_HIGH, REPO, assert_problem, new_thread


async def _parked_refund(client: httpx.AsyncClient) -> tuple[str, dict[str, Any]]:
    """A high-risk refund parked on its approval: its thread and the inbox's approval."""
    thread_id = await new_thread(client)
    parked = await client.post(
        f"/threads/{thread_id}/runs/wait",
        json={"assistant_id": "refund-approval", "input": REFUND_HIGH},
    )
    assert parked.json()["__interrupt__"]
    inbox = (await client.get("/approvals", params={"status": "pending"})).json()
    [approval] = [item for item in inbox if item["thread_id"] == thread_id]
    return thread_id, approval


async def test_inbox_and_decision(client: httpx.AsyncClient) -> None:
    thread_id, approval = await _parked_refund(client)
    assert approval["graph"] == "refund-approval"
    assert approval["version"] == "1.0.0"
    assert approval["node"] == "approve"
    assert approval["action"] == "issue_refund"
    assert approval["arguments"] == {"order_id": "A-1002", "amount": 180.0}
    assert "high risk" in approval["reason"]
    assert approval["expires_at"] is not None
    assert approval["budget_used"] is None
    assert approval["status"] == "pending"
    approval_id = approval["approval_id"]
    assert (await client.get(f"/approvals/{approval_id}")).json()["run_id"] == approval["run_id"]

    invalid = await client.post(f"/approvals/{approval_id}/decision", json={"decision": "maybe"})
    assert_problem(invalid, 422)
    decided = await client.post(
        f"/approvals/{approval_id}/decision",
        json={
            "decision": "edit",
            "arguments": {"order_id": "A-1002", "amount": 90.0},
            "comment": "Half refund.",
            "actor": "ops@example.com",
        },
    )
    assert decided.status_code == 200, decided.text
    result = decided.json()
    assert result["approval"]["status"] == "edited"
    assert result["approval"]["decided_by"] == "ops@example.com"
    run = result["run"]
    assert run["thread_id"] == thread_id

    joined = await client.get(f"/threads/{thread_id}/runs/{run['run_id']}/join")
    assert joined.json()["outcome"].startswith("refunded 90")
    again = await client.post(f"/approvals/{approval_id}/decision", json={"decision": "approve"})
    assert "edited" in assert_problem(again, 409)["detail"]
    missing = await client.post(f"/approvals/{uuid.uuid4()}/decision", json={"decision": "approve"})
    assert_problem(missing, 404)
    assert_problem(await client.get(f"/approvals/{uuid.uuid4()}"), 404)
    everything = (await client.get("/approvals", params={"status": "all"})).json()
    assert approval_id in {item["approval_id"] for item in everything}
    assert_problem(await client.get("/approvals", params={"status": "odd"}), 422)


async def test_the_inbox_shows_what_the_run_has_spent(client: httpx.AsyncClient) -> None:
    name = f"budgeted-{uuid.uuid4().hex[:6]}"
    text = (REPO / "specs" / "refund-approval.yaml").read_text(encoding="utf-8")
    text = text.replace("name: refund-approval\n", f"name: {name}\n", 1)
    text = text.replace("spec:\n", "spec:\n  budgets: {max_steps: 50}\n", 1)
    uploaded = await client.post("/graphs", json={"yaml": text})
    assert uploaded.status_code == 201, uploaded.text
    thread_id = await new_thread(client)

    parked = await client.post(
        f"/threads/{thread_id}/runs/wait", json={"assistant_id": name, "input": REFUND_HIGH}
    )

    assert parked.json()["__interrupt__"]
    inbox = (await client.get("/approvals", params={"status": "pending"})).json()
    [approval] = [item for item in inbox if item["thread_id"] == thread_id]
    used = approval["budget_used"]
    # `assess` ran before the approval parked the run.
    assert used is not None and used["steps"] >= 1


async def test_the_decided_tab_lists_who_decided_newest_first(client: httpx.AsyncClient) -> None:
    """``status=decided`` lists every approval no longer pending, with who decided and
    when; ``order=newest`` lists the newest requests first."""
    thread_ids = [await new_thread(client) for _ in range(2)]
    for thread_id in thread_ids:
        parked = await client.post(
            f"/threads/{thread_id}/runs/wait",
            json={"assistant_id": "refund-approval", "input": REFUND_HIGH},
        )
        assert parked.json()["__interrupt__"]
    pending = (await client.get("/approvals", params={"status": "pending"})).json()
    first, second = (
        next(item for item in pending if item["thread_id"] == thread_id) for thread_id in thread_ids
    )
    decided = await client.post(
        f"/approvals/{first['approval_id']}/decision",
        json={"decision": "reject", "comment": "not ours", "actor": "ops@example.com"},
    )
    assert decided.status_code == 200, decided.text

    listed = (await client.get("/approvals", params={"status": "decided"})).json()
    [row] = [item for item in listed if item["approval_id"] == first["approval_id"]]
    assert row["status"] == "rejected"
    assert row["decided_by"] == "ops@example.com"
    assert row["decided_at"] is not None
    assert row["decision"] == {"decision": "reject", "comment": "not ours"}
    assert row["resume_run_id"] == decided.json()["run"]["run_id"]
    assert all(item["status"] != "pending" for item in listed)
    assert second["approval_id"] not in {item["approval_id"] for item in listed}

    def order_of(items: list[dict[str, object]]) -> list[int]:
        ids = [item["approval_id"] for item in items]
        return [ids.index(first["approval_id"]), ids.index(second["approval_id"])]

    every = {"status": "all", "limit": 1000}
    oldest = (await client.get("/approvals", params=every)).json()
    newest = (await client.get("/approvals", params={**every, "order": "newest"})).json()
    assert order_of(oldest)[0] < order_of(oldest)[1]
    assert order_of(newest)[0] > order_of(newest)[1]
    assert_problem(await client.get("/approvals", params={"order": "sideways"}), 422)


async def test_an_edited_decision_keeps_the_arguments_in_the_order_given(
    client: httpx.AsyncClient,
) -> None:
    """The edited arguments reach the run's state and the decided tab in the order the
    person's form sent them (the inbox's order: `order_id` first), not in the order
    `jsonb` would store them (shorter keys first: `amount`)."""
    thread_id, approval = await _parked_refund(client)
    assert list(approval["arguments"]) == ["order_id", "amount"]

    decided = await client.post(
        f"/approvals/{approval['approval_id']}/decision",
        json={"decision": "edit", "arguments": {"order_id": "A-1002", "amount": 90.0}},
    )
    assert decided.status_code == 200, decided.text
    run_id = decided.json()["run"]["run_id"]
    joined = (await client.get(f"/threads/{thread_id}/runs/{run_id}/join")).json()
    assert list(joined["decision"]["arguments"]) == ["order_id", "amount"]
    state = (await client.get(f"/threads/{thread_id}/state")).json()
    assert list(state["values"]["decision"]["arguments"]) == ["order_id", "amount"]
    listed = (await client.get("/approvals", params={"status": "decided", "limit": 1000})).json()
    [row] = [item for item in listed if item["approval_id"] == approval["approval_id"]]
    assert list(row["decision"]["arguments"]) == ["order_id", "amount"]
    # The tool's result, recorded before the graph sees it, reads back as the tool returned it.
    refund = state["values"]["refund"]
    assert list(refund) == ["refund_id", "order_id", "customer", "amount", "status"]


async def test_a_run_keeps_its_input_in_the_order_sent(client: httpx.AsyncClient) -> None:
    """A run's input travels with the run (its stored kwargs) and reaches the graph with
    its keys in the order the client sent them."""
    thread_id = await new_thread(client)
    parked = await client.post(
        f"/threads/{thread_id}/runs/wait",
        json={"assistant_id": "refund-approval", "input": {"reason": "late", **REFUND_HIGH}},
    )
    [interrupt] = parked.json()["__interrupt__"]
    assert list(interrupt["value"]["arguments"]) == ["order_id", "amount"]
    runs = (await client.get(f"/threads/{thread_id}/runs")).json()
    assert list(runs[0]["kwargs"]["input"]) == ["reason", "order_id", "amount"]
