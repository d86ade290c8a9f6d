"""The approvals inbox (table ``plait_approvals``): parked interrupts and their decisions.

A run that stops on an approval node's ``interrupt()`` ends; the worker
records one row per approval interrupt here, and the thread holds no worker
and no memory while it waits. A decision (or an expiry) becomes a new run on
the thread with ``command = {"resume": {interrupt_id: decision}}`` (the map
form LangGraph takes for several pending interrupts), enqueued behind any
active run. Who decided is stored on the row (``decided_by``) and in the
resume run's metadata (``plait_approval``), so ``GET /threads/{tid}/runs/{rid}``
shows it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import pydantic
from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from engine.spec.errors import validation_problems
from engine.spec.models import Decision
from engine.store.pool import Pool
from server.mcp_tasks import record_parked
from server.queue.leases import Lease, fenced_transaction
from server.queue.runs import Run, create_run_in, hash_request, resume_kwargs
from server.registry import get_version

APPROVAL_STATUSES: tuple[str, ...] = ("pending", "approved", "rejected", "edited", "expired")
#: A ``status`` filter for every approval no longer pending (the inbox's decided tab).
DECIDED = "decided"
#: ``decided_by`` of decisions made by the expiry sweep.
EXPIRY_ACTOR = "plait:expiry"

_COLUMNS = (
    "approval_id, thread_id, run_id, graph, version, node, interrupt_id, action, arguments, "
    "reason, expires_at, on_expire, status, decision, decided_by, resume_run_id, "
    "created_at, decided_at, budget_used, tenant_id"
)
# Approvals of a tenant: ``%(tenant)s`` NULL means any tenant (the worker's expiry sweep).
_OF_TENANT = "(%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)"
_DECIDED = {"approve": "approved", "reject": "rejected", "edit": "edited"}


class ApprovalNotFound(LookupError):
    """No such approval (HTTP 404)."""

    def __init__(self, approval_id: str) -> None:
        super().__init__(f"approval {approval_id} not found")


class ApprovalClosed(Exception):
    """The approval was already decided or expired (HTTP 409)."""

    def __init__(self, approval: Mapping[str, Any]) -> None:
        self.approval = dict(approval)
        by = f" by {approval['decided_by']}" if approval.get("decided_by") else ""
        super().__init__(f"approval {approval['approval_id']} is already {approval['status']}{by}")


class InvalidDecision(ValueError):
    """A decision that is not ``{decision: approve|reject|edit, arguments?, comment?}`` (422)."""


async def record_interrupts(
    pool: Pool,
    run: Run,
    interrupts: list[dict[str, Any]],
    budget_used: Mapping[str, Any] | None = None,
    *,
    lease: Lease | None = None,
) -> list[dict[str, Any]]:
    """Record the approval interrupts a run stopped on; return their rows.

    With ``lease`` (the worker's), only while it holds the run
    (:class:`~server.queue.leases.LeaseLost` otherwise, and nothing is recorded).

    ``interrupts`` are LangGraph interrupts as dicts ``{id, value}``; only
    those whose value has ``kind == "approval"`` (the approval node's
    payload) are approvals. Recording the same interrupt again (a reclaimed
    run, or a thread resumed for another of its interrupts) keeps the first row.
    ``budget_used`` is the run's usage so far (spec budgets), shown to the approver.
    """
    async with fenced_transaction(pool, lease, "recording approvals") as conn:
        rows = await _insert_approvals(conn, run, interrupts, budget_used)
    # MCP task interrupts are not approvals: they are parked tool calls the poller resumes.
    await record_parked(pool, run.run_id, interrupts)
    return rows


async def _insert_approvals(
    conn: AsyncConnection[DictRow],
    run: Run,
    interrupts: list[dict[str, Any]],
    budget_used: Mapping[str, Any] | None,
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for item in interrupts:
        value = item.get("value")
        if not isinstance(value, Mapping) or value.get("kind") != "approval":
            continue
        cursor = await conn.execute(
            f"""
            INSERT INTO plait_approvals (
                approval_id, thread_id, run_id, graph, version, node, interrupt_id,
                action, arguments, reason, expires_at, on_expire, budget_used, tenant_id
            )
            VALUES (gen_random_uuid()::text, %s, %s, %s, %s, %s, %s, %s, %s, %s,
                    %s::timestamptz, %s, %s, %s)
            ON CONFLICT (thread_id, interrupt_id) DO UPDATE
            SET interrupt_id = EXCLUDED.interrupt_id  -- no change: returns the row
            RETURNING {_COLUMNS}
            """,
            (
                run.thread_id,
                run.run_id,
                run.graph,
                run.version,
                value.get("node"),
                item["id"],
                value.get("action"),
                Jsonb(value.get("arguments")),
                value.get("reason"),
                value.get("expires_at"),
                value.get("on_expire") or "reject",
                Jsonb(dict(budget_used)) if budget_used is not None else None,
                run.tenant,
            ),
        )
        row = await cursor.fetchone()
        if row is not None:
            rows.append(_approval(row))
    return rows


async def get_approval(
    pool: Pool, approval_id: str, *, tenant: str | None = None
) -> dict[str, Any] | None:
    """One approval, or ``None`` (also another tenant's than ``tenant``; None: any)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_approvals WHERE approval_id = %(id)s AND {_OF_TENANT}",
            {"id": approval_id, "tenant": tenant},
        )
        row = await cursor.fetchone()
    return None if row is None else _approval(row)


async def list_approvals(
    pool: Pool,
    status: str | None = "pending",
    *,
    thread_id: str | None = None,
    limit: int = 100,
    offset: int = 0,
    tenant: str | None = None,
    newest_first: bool = False,
) -> list[dict[str, Any]]:
    """Approvals across threads, oldest first (``newest_first``: the reverse).

    ``status=None`` lists every status, ``"decided"`` every one no longer pending.
    """
    if status is not None and status not in (*APPROVAL_STATUSES, DECIDED):
        raise ValueError(
            f"unknown approval status {status!r}; use one of "
            f"{', '.join((*APPROVAL_STATUSES, DECIDED))}"
        )
    # Constant SQL per order (no identifier built from input).
    order = "created_at DESC, approval_id DESC" if newest_first else "created_at, approval_id"
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"""
            SELECT {_COLUMNS} FROM plait_approvals
            WHERE (%(status)s::text IS NULL OR status = %(status)s
                   OR (%(status)s = 'decided' AND status <> 'pending'))
              AND (%(thread)s::text IS NULL OR thread_id = %(thread)s) AND {_OF_TENANT}
            ORDER BY {order}
            LIMIT %(limit)s OFFSET %(offset)s
            """.encode(),
            {
                "status": status,
                "thread": thread_id,
                "tenant": tenant,
                "limit": limit,
                "offset": offset,
            },
        )
        rows = await cursor.fetchall()
    return [_approval(row) for row in rows]


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
        pool, approval_id, answer, _DECIDED[validated.decision], actor, tenant=tenant
    )


async def expired(pool: Pool, now: datetime) -> list[dict[str, Any]]:
    """Pending approvals whose expiry is at or before ``now``, oldest expiry first."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_approvals "
            "WHERE status = 'pending' AND expires_at <= %s ORDER BY expires_at, approval_id",
            (now,),
        )
        rows = await cursor.fetchall()
    return [_approval(row) for row in rows]


async def expire(
    pool: Pool, approval_id: str, actor: str = EXPIRY_ACTOR
) -> tuple[dict[str, Any], Run] | None:
    """Resolve an expired approval the way its spec says; return (approval, resume run).

    The approval node applies ``on_expire`` itself when it resumes past its
    expiry (approve, reject, or fail the run); the resume value carries the
    same decision so the inbox reads truthfully. ``None`` when the approval
    is gone or someone decided first (the sweep races with people).
    """
    approval = await get_approval(pool, approval_id)
    if approval is None or approval["status"] != "pending":
        return None
    on_expire = approval["on_expire"]
    answer = {
        "decision": on_expire if on_expire in _DECIDED else "reject",
        "comment": "expired",
    }
    try:
        return await _resolve(pool, approval_id, answer, "expired", actor)
    except (ApprovalClosed, ApprovalNotFound):
        return None


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
    async with pool.connection() as conn, conn.transaction():
        # The thread's lock first, as every transaction that creates runs takes it.
        await conn.execute(
            "SELECT 1 FROM plait_threads WHERE thread_id = %s FOR NO KEY UPDATE",
            (approval["thread_id"],),
        )
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_approvals WHERE approval_id = %s FOR UPDATE",
            (approval_id,),
        )
        row = await cursor.fetchone()
        if row is None:
            raise ApprovalNotFound(approval_id)
        if row["status"] != "pending":
            raise ApprovalClosed(_approval(row))
        # Marked first, so the run's own settling of command.resume finds nothing pending.
        await conn.execute(
            """
            UPDATE plait_approvals
            SET status = %s, decision = %s, decided_by = %s, decided_at = now()
            WHERE approval_id = %s
            """,
            (status, Jsonb(answer), actor, approval_id),
        )
        cursor = await conn.execute(
            "SELECT kwargs FROM plait_runs WHERE run_id = %s", (row["run_id"],)
        )
        parked = await cursor.fetchone()
        kwargs = resume_kwargs(
            row["interrupt_id"], answer, parked["kwargs"] if parked is not None else None
        )
        metadata = {
            "plait_approval": {
                "approval_id": approval_id,
                "interrupt_id": row["interrupt_id"],
                "decided_by": actor,
                "decision": answer,
                "status": status,
            }
        }
        run, _ = await create_run_in(
            conn,
            thread_id=row["thread_id"],
            graph=graph,
            kwargs=kwargs,
            metadata=metadata,
            # Several approvals of one thread may be decided while a resume runs.
            multitask_strategy="enqueue",
            idempotency_key=None,
            request_hash=hash_request({"approval": approval_id, "answer": answer}),
            route="",
            if_not_exists="reject",
            tenant=approval["tenant_id"],
        )
        cursor = await conn.execute(
            f"UPDATE plait_approvals SET resume_run_id = %s WHERE approval_id = %s "
            f"RETURNING {_COLUMNS}",
            (run.run_id, approval_id),
        )
        updated = await cursor.fetchone()
    if updated is None:  # cannot happen: the row is locked by this transaction
        raise ApprovalNotFound(approval_id)
    return _approval(updated), run


def _approval(row: Mapping[str, Any]) -> dict[str, Any]:
    """JSON-ready approval."""
    result = dict(row)
    for key in ("expires_at", "created_at", "decided_at"):
        value = result.get(key)
        result[key] = value.isoformat() if isinstance(value, datetime) else value
    return result
