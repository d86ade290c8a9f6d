"""Deciding an approval: record the decision and resume the thread, in one transaction.

A decision (or an expiry) becomes a new run on the thread with
``command = {"resume": {interrupt_id: decision}}`` (the map form LangGraph
takes for several pending interrupts), enqueued behind any active run. Who
decided is stored on the row (``decided_by``) and in the resume run's metadata
(``plait_approval``), so ``GET /threads/{tid}/runs/{rid}`` shows it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pydantic
from psycopg import AsyncConnection
from psycopg.rows import DictRow

from plait.engine.spec import Decision, validation_problems
from plait.engine.store import Pool
from plait.server.approvals.records import (
    DECISION_STATUS,
    ApprovalNotFound,
    InvalidDecision,
    get_approval,
    lock_pending_in,
    mark_decided_in,
    pending_of_interrupt_in,
    set_resume_run_in,
)
from plait.server.graphs.versions import GraphVersion, get_version
from plait.server.queue.runs import Run, resume_thread_in, thread_transaction

#: ``decided_by`` of decisions made by an approval's expiry timer.
EXPIRY_ACTOR = "plait:expiry"


async def decide(
    pool: Pool,
    approval_id: str,
    decision: Mapping[str, Any],
    actor: str | None,
    *,
    tenant: str | None = None,
) -> tuple[dict[str, Any], Run]:
    """Record a person's decision and resume the thread with it; return (approval, run).

    Raises :class:`InvalidDecision` (422), :class:`ApprovalNotFound` (404) or
    :class:`ApprovalClosed` (409, also when two people decide at once: the
    first wins).
    """
    try:
        validated = Decision.model_validate(decision)
    except pydantic.ValidationError as exc:
        raise InvalidDecision(
            f"invalid decision: expected {{decision: approve|reject|edit, arguments?, "
            f"comment?}}; {validation_problems(exc)}"
        ) from None
    answer = validated.model_dump(exclude_none=True)
    return await _resolve(
        pool, approval_id, answer, DECISION_STATUS[validated.decision], actor, tenant=tenant
    )


async def expire_in(
    conn: AsyncConnection[DictRow],
    thread_id: str,
    interrupt_id: str,
    graph: GraphVersion,
    actor: str = EXPIRY_ACTOR,
) -> tuple[dict[str, Any], Run] | None:
    """Resolve the expired approval of ``interrupt_id`` as its spec says; (approval, resume run).

    Called by its timer (server/workers/timer_firer.py) inside
    :func:`thread_transaction`. The approval node applies ``on_expire`` itself
    when it resumes past its expiry (approve, reject, or fail the run); the
    resume value carries the same decision so the inbox reads truthfully.
    ``None`` when no approval of it is pending (someone decided first).
    """
    approval_id = await pending_of_interrupt_in(conn, thread_id, interrupt_id)
    if approval_id is None:
        return None
    row = await lock_pending_in(conn, approval_id)
    on_expire = row["on_expire"]
    answer = {
        "decision": on_expire if on_expire in DECISION_STATUS else "reject",
        "comment": "expired",
    }
    return await _resolve_locked(conn, row, graph, answer, "expired", actor)


async def _resolve(
    pool: Pool,
    approval_id: str,
    answer: dict[str, Any],
    status: str,
    actor: str | None,
    *,
    tenant: str | None = None,
) -> tuple[dict[str, Any], Run]:
    """Mark the approval and create its resume run, in one transaction."""
    approval = await get_approval(pool, approval_id, tenant=tenant)
    if approval is None:
        raise ApprovalNotFound(approval_id)
    graph = await get_version(
        pool, approval["graph"], approval["version"], tenant=approval["tenant_id"]
    )
    if graph is None:
        raise LookupError(
            f"graph {approval['graph']}@{approval['version']} of approval {approval_id} "
            "is not registered"
        )
    async with thread_transaction(pool, approval["thread_id"]) as conn:
        row = await lock_pending_in(conn, approval_id)
        return await _resolve_locked(conn, row, graph, answer, status, actor)


async def _resolve_locked(
    conn: AsyncConnection[DictRow],
    row: Mapping[str, Any],
    graph: GraphVersion,
    answer: dict[str, Any],
    status: str,
    actor: str | None,
) -> tuple[dict[str, Any], Run]:
    """Mark the locked pending approval ``row`` and create its resume run."""
    approval_id = row["approval_id"]
    await mark_decided_in(conn, approval_id, status, answer, actor)
    run = await resume_thread_in(
        conn,
        thread_id=row["thread_id"],
        graph=graph,
        parked_run_id=row["run_id"],
        interrupt_id=row["interrupt_id"],
        answer=answer,
        metadata={
            "plait_approval": {
                "approval_id": approval_id,
                "interrupt_id": row["interrupt_id"],
                "decided_by": actor,
                "decision": answer,
                "status": status,
            }
        },
        origin={"approval": approval_id, "answer": answer},
        tenant=row["tenant_id"],
    )
    return await set_resume_run_in(conn, approval_id, run.run_id), run
