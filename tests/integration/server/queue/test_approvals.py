"""The approvals inbox: parked interrupts, decisions, expiry, on real Postgres."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from plait.engine.store.pool import Pool
from plait.server.approvals import records
from plait.server.approvals.records import ApprovalClosed, ApprovalNotFound, InvalidDecision
from plait.server.graphs.versions import GraphVersion
from plait.server.queue import decisions, timers
from plait.server.queue.runs import Run, claim_runs, create_run, finish_run, get_run
from plait.server.queue.threads import create_thread, get_thread
from plait.server.workers.timer_firer import TimerFirer
from tests.integration.server.queue.conftest import unique

pytestmark = pytest.mark.postgres

LEASE = 30.0


def _interrupt(
    interrupt_id: str, *, expires_at: datetime | None = None, on_expire: str = "reject"
) -> dict[str, Any]:
    """An interrupt as the approval node raises it (see engine/compiler/nodes/approval.py)."""
    return {
        "id": interrupt_id,
        "value": {
            "kind": "approval",
            "node": "approve",
            "action": "issue_refund",
            "arguments": {"order_id": "A-1", "amount": 120},
            "reason": "high risk",
            "expires_at": expires_at.isoformat() if expires_at else None,
            "on_expire": on_expire,
        },
    }


async def _parked(pool: Pool, graph: GraphVersion, interrupts: list[dict[str, Any]]) -> Run:
    """A run that stopped on ``interrupts``, with its thread waiting."""
    thread = await create_thread(pool, thread_id=unique("t"))
    run, _ = await create_run(
        pool, thread_id=thread["thread_id"], graph=graph, kwargs={"input": {}}, metadata={}
    )
    await claim_runs(pool, "w1", 10, LEASE)
    async with pool.connection() as conn:
        await records.record_interrupts(conn, run, interrupts)
    assert await finish_run(pool, run.run_id, "w1", "waiting_for_person")
    return run


async def test_record_interrupts_keeps_approvals_once(qpool: Pool, qgraph: GraphVersion) -> None:
    expiry = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    other = {"id": "i-other", "value": {"kind": "question", "text": "?"}}
    run = await _parked(
        qpool, qgraph, [_interrupt("i-1", expires_at=expiry), other, {"id": "x", "value": "plain"}]
    )

    async with qpool.connection() as conn:
        again = await records.record_interrupts(conn, run, [_interrupt("i-1")])

    [pending] = await records.list_approvals(qpool, thread_id=run.thread_id)
    assert again == [pending]
    assert pending["interrupt_id"] == "i-1"
    assert (pending["graph"], pending["version"], pending["run_id"]) == (
        qgraph.name,
        "1.0.0",
        run.run_id,
    )
    assert (pending["node"], pending["action"], pending["reason"]) == (
        "approve",
        "issue_refund",
        "high risk",
    )
    assert pending["arguments"] == {"order_id": "A-1", "amount": 120}
    # In the graph's order, as the run's card shows them (jsonb would put `amount` first).
    assert list(pending["arguments"]) == ["order_id", "amount"]
    assert datetime.fromisoformat(pending["expires_at"]) == expiry
    assert pending["status"] == "pending"
    thread = await get_thread(qpool, run.thread_id)
    assert thread is not None and thread["status"] == "interrupted"


async def test_decide_resumes_the_thread(qpool: Pool, qgraph: GraphVersion) -> None:
    run = await _parked(qpool, qgraph, [_interrupt("i-1")])
    [pending] = await records.list_approvals(qpool, thread_id=run.thread_id)

    decided, resume = await decisions.decide(
        qpool,
        pending["approval_id"],
        {"decision": "edit", "arguments": {"order_id": "A-1", "amount": 50}},
        "alice@example.com",
    )

    assert decided["status"] == "edited"
    assert decided["decided_by"] == "alice@example.com"
    assert decided["resume_run_id"] == resume.run_id
    answer = {"decision": "edit", "arguments": {"order_id": "A-1", "amount": 50}}
    assert decided["decision"] == answer
    assert resume.kwargs == {"command": {"resume": {"i-1": answer}}}
    assert resume.metadata["plait_approval"]["decided_by"] == "alice@example.com"
    assert (resume.thread_id, resume.status) == (run.thread_id, "pending")
    assert await records.list_approvals(qpool, thread_id=run.thread_id) == []
    assert await records.list_approvals(qpool, None, thread_id=run.thread_id) == [decided]
    with pytest.raises(ApprovalClosed, match="edited by alice"):
        await decisions.decide(qpool, pending["approval_id"], {"decision": "approve"}, "bob")


async def test_invalid_and_unknown_decisions_are_refused(qpool: Pool, qgraph: GraphVersion) -> None:
    run = await _parked(qpool, qgraph, [_interrupt("i-1")])
    [pending] = await records.list_approvals(qpool, thread_id=run.thread_id)

    with pytest.raises(InvalidDecision, match="decision"):
        await decisions.decide(qpool, pending["approval_id"], {"decision": "maybe"}, None)
    with pytest.raises(ApprovalNotFound):
        await decisions.decide(qpool, unique("a"), {"decision": "approve"}, None)
    with pytest.raises(ValueError, match="status"):
        await records.list_approvals(qpool, "nearly")

    still = await records.get_approval(qpool, pending["approval_id"])
    assert still == pending


async def test_two_people_deciding_at_once_one_wins(qpool: Pool, qgraph: GraphVersion) -> None:
    run = await _parked(qpool, qgraph, [_interrupt("i-1")])
    [pending] = await records.list_approvals(qpool, thread_id=run.thread_id)

    results = await asyncio.gather(
        decisions.decide(qpool, pending["approval_id"], {"decision": "approve"}, "alice"),
        decisions.decide(qpool, pending["approval_id"], {"decision": "reject"}, "bob"),
        return_exceptions=True,
    )

    assert sorted(type(r).__name__ for r in results) == ["ApprovalClosed", "tuple"]


async def test_decisions_on_parallel_approvals_queue_up(qpool: Pool, qgraph: GraphVersion) -> None:
    run = await _parked(qpool, qgraph, [_interrupt("i-1"), _interrupt("i-2")])
    first, second = await records.list_approvals(qpool, thread_id=run.thread_id)

    _, resume_one = await decisions.decide(
        qpool, first["approval_id"], {"decision": "approve"}, "a"
    )
    _, resume_two = await decisions.decide(
        qpool, second["approval_id"], {"decision": "reject"}, "b"
    )

    claimed = await claim_runs(qpool, "w2", 10, LEASE)
    assert [r.run_id for r in claimed] == [resume_one.run_id]
    assert resume_two.multitask_strategy == "enqueue"


async def test_command_resume_settles_the_approvals_it_answers(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    run = await _parked(qpool, qgraph, [_interrupt("i-1"), _interrupt("i-2")])

    resume, _ = await create_run(
        qpool,
        thread_id=run.thread_id,
        graph=qgraph,
        kwargs={"command": {"resume": {"i-2": {"decision": "approve"}}}},
        metadata={},
    )

    by_interrupt = {
        a["interrupt_id"]: a
        for a in await records.list_approvals(qpool, None, thread_id=run.thread_id)
    }
    assert by_interrupt["i-1"]["status"] == "pending"
    assert by_interrupt["i-2"]["status"] == "approved"
    assert by_interrupt["i-2"]["resume_run_id"] == resume.run_id


async def test_a_single_resume_value_answers_the_only_approval(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    run = await _parked(qpool, qgraph, [_interrupt("i-1")])

    await create_run(
        qpool,
        thread_id=run.thread_id,
        graph=qgraph,
        kwargs={"command": {"resume": {"decision": "reject", "comment": "no"}}},
        metadata={},
    )

    [settled] = await records.list_approvals(qpool, None, thread_id=run.thread_id)
    assert settled["status"] == "rejected"
    assert settled["decision"] == {"decision": "reject", "comment": "no"}


@pytest.mark.parametrize(
    "resume",
    [
        {"decision": "approve"},  # one value, two pending: LangGraph would not resume either
        {"i-1": {"decision": "maybe"}, "i-2": "approve"},  # no valid decision in the answers
    ],
)
async def test_a_resume_that_answers_no_approval_leaves_them_pending(
    qpool: Pool, qgraph: GraphVersion, resume: dict[str, Any]
) -> None:
    run = await _parked(qpool, qgraph, [_interrupt("i-1"), _interrupt("i-2")])

    await create_run(
        qpool,
        thread_id=run.thread_id,
        graph=qgraph,
        kwargs={"command": {"resume": resume}},
        metadata={},
    )

    approvals = await records.list_approvals(qpool, None, thread_id=run.thread_id)
    assert sorted(a["status"] for a in approvals) == ["pending", "pending"]


async def test_expired_approvals_resolve_as_the_spec_says_when_their_timer_fires(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    now = datetime.now(UTC)
    past, future = now - timedelta(minutes=1), now + timedelta(hours=1)
    interrupts = [
        _interrupt("i-past", expires_at=past, on_expire="approve"),
        _interrupt("i-future", expires_at=future),
        _interrupt("i-never"),
    ]
    run = await _parked(qpool, qgraph, interrupts)
    async with qpool.connection() as conn:
        assert await timers.record_in(conn, run, interrupts) == 2  # i-never has no expiry
    firer = TimerFirer(qpool)

    def of_thread(found: list[timers.Timer]) -> list[str]:
        return [t.interrupt_id for t in found if t.thread_id == run.thread_id]

    assert of_thread(await timers.due(qpool, 100)) == ["i-past"]
    assert await firer.fire_due() >= 1
    [expired] = [
        a
        for a in await records.list_approvals(qpool, None, thread_id=run.thread_id)
        if a["interrupt_id"] == "i-past"
    ]
    assert (expired["status"], expired["decided_by"]) == ("expired", decisions.EXPIRY_ACTOR)
    resume = await get_run(qpool, expired["resume_run_id"])
    assert resume is not None and resume.status == "pending"
    assert resume.kwargs["command"]["resume"] == {
        "i-past": {"decision": "approve", "comment": "expired"}
    }
    # Fired once: nothing of this thread is due any more.
    assert of_thread(await timers.due(qpool, 100)) == []
    # A person's decision first cancels the expiry of the approval they decided.
    pending = await records.list_approvals(qpool, "pending", thread_id=run.thread_id)
    assert sorted(a["interrupt_id"] for a in pending) == ["i-future", "i-never"]
    [waiting] = [a for a in pending if a["interrupt_id"] == "i-future"]
    await decisions.decide(qpool, waiting["approval_id"], {"decision": "approve"}, "ann")
    by_interrupt = {t.interrupt_id: t.status for t in await timers.timers_of_run(qpool, run.run_id)}
    assert by_interrupt == {"i-past": "fired", "i-future": "cancelled"}


async def test_a_timer_whose_graph_version_is_gone_is_cancelled(
    qpool: Pool, qgraph: GraphVersion
) -> None:
    past = datetime.now(UTC) - timedelta(minutes=1)
    interrupt = {"id": "w-1", "value": {"kind": "wait", "node": "pause", "until": past.isoformat()}}
    run = await _parked(qpool, qgraph, [])
    # The run as if it ran a version nobody registered (or one deleted since).
    gone = SimpleNamespace(
        run_id=run.run_id,
        thread_id=run.thread_id,
        graph=qgraph.name,
        version="9.9.9",
        tenant=run.tenant,
    )
    async with qpool.connection() as conn:
        assert await timers.record_in(conn, gone, [interrupt]) == 1

    await TimerFirer(qpool).fire_due()

    [timer] = await timers.timers_of_run(qpool, run.run_id)
    assert (timer.status, timer.resume_run_id) == ("cancelled", None)
