"""The approvals inbox's table, ``plait_approvals``: parked interrupts and their decisions.

A run that stops on an approval node's ``interrupt()`` ends; the worker
records one row per approval interrupt here, and the thread holds no worker
and no memory while it waits. Deciding one (``plait.server.queue.decisions``)
resumes the thread; a resume sent straight to ``/runs`` settles the rows it
answers (:func:`settle_answered_in`). Every statement on the table is in this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg.types.json import Json, Jsonb

from plait.engine.store import Pool
from plait.server.auth.store import OF_TENANT

APPROVAL_STATUSES: tuple[str, ...] = ("pending", "approved", "rejected", "edited", "expired")
#: A ``status`` filter for every approval no longer pending (the inbox's decided tab).
DECIDED = "decided"

_COLUMNS = (
    "approval_id, thread_id, run_id, graph, version, node, interrupt_id, action, arguments, "
    "reason, expires_at, on_expire, status, decision, decided_by, resume_run_id, "
    "created_at, decided_at, budget_used, tenant_id"
)
#: The status an approval takes for each decision.
DECISION_STATUS = {"approve": "approved", "reject": "rejected", "edit": "edited"}


class ParkedRun(Protocol):
    """The run whose interrupts are recorded (``plait.server.queue.runs.Run``)."""

    @property
    def run_id(self) -> str: ...
    @property
    def thread_id(self) -> str: ...
    @property
    def graph(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def tenant(self) -> str: ...


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
    conn: AsyncConnection[DictRow],
    run: ParkedRun,
    interrupts: list[dict[str, Any]],
    budget_used: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Record the approval interrupts a run stopped on; return their rows.

    ``interrupts`` are LangGraph interrupts as dicts ``{id, value}``; only
    those whose value has ``kind == "approval"`` (the approval node's
    payload) are approvals. Recording the same interrupt again (a reclaimed
    run, or a thread resumed for another of its interrupts) keeps the first row.
    ``budget_used`` is the run's usage so far (spec budgets), shown to the approver.
    A worker records in a transaction fenced by its lease
    (``plait.server.queue.leases.fenced_transaction``).
    """
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
                Json(value.get("arguments")),  # json: keeps the graph's key order
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


async def move_pending_in(
    conn: AsyncConnection[DictRow],
    thread_id: str,
    version: str,
    moved: Mapping[str, tuple[str, str]],
) -> int:
    """Point the thread's pending approvals at their interrupts on ``version`` after an
    upgrade: ``moved`` maps an old interrupt id to its new id and node. Returns how many."""
    count = 0
    for old_id, (new_id, node) in moved.items():
        cursor = await conn.execute(
            """
            UPDATE plait_approvals SET interrupt_id = %s, node = %s, version = %s
            WHERE thread_id = %s AND interrupt_id = %s AND status = 'pending'
            """,
            (new_id, node, version, thread_id, old_id),
        )
        count += cursor.rowcount
    return count


async def get_approval(
    pool: Pool, approval_id: str, *, tenant: str | None = None
) -> dict[str, Any] | None:
    """One approval, or ``None`` (also another tenant's than ``tenant``; None: any)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_approvals WHERE approval_id = %(id)s AND {OF_TENANT}",
            {"id": approval_id, "tenant": tenant},
        )
        row = await cursor.fetchone()
    return None if row is None else _approval(row)


@dataclass(frozen=True)
class DecisionWaits:
    """How long decided approvals waited: cumulative counts per bucket bound, count and sum."""

    cumulative: list[int]
    count: int
    total_seconds: float


async def approval_counts(conn: AsyncConnection[DictRow]) -> dict[str, int]:
    """Approvals by status (for ``/metrics``; every tenant)."""
    cursor = await conn.execute("SELECT status, count(*) AS n FROM plait_approvals GROUP BY status")
    return {str(row["status"]): int(row["n"]) for row in await cursor.fetchall()}


async def decision_waits(conn: AsyncConnection[DictRow], bounds: Sequence[float]) -> DecisionWaits:
    """Time from creation to decision (or expiry) of every decided approval, by ``bounds``."""
    cursor = await conn.execute(
        """
        SELECT count(*) FILTER (WHERE wait <= b) AS le
        FROM unnest(%(bounds)s::float8[]) WITH ORDINALITY AS t(b, i)
        CROSS JOIN LATERAL (
          SELECT extract(epoch FROM decided_at - created_at) AS wait
          FROM plait_approvals WHERE decided_at IS NOT NULL
        ) w
        GROUP BY i ORDER BY i
        """,
        {"bounds": list(bounds)},
    )
    cumulative = [int(row["le"]) for row in await cursor.fetchall()]
    if len(cumulative) != len(bounds):  # no decided approval yet
        cumulative = [0] * len(bounds)
    cursor = await conn.execute(
        "SELECT count(*) AS n, "
        "coalesce(sum(extract(epoch FROM decided_at - created_at)), 0) AS total "
        "FROM plait_approvals WHERE decided_at IS NOT NULL"
    )
    totals = await cursor.fetchone()
    assert totals is not None  # aggregates always return a row
    return DecisionWaits(cumulative, int(totals["n"]), float(totals["total"]))


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
              AND (%(thread)s::text IS NULL OR thread_id = %(thread)s) AND {OF_TENANT}
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


async def approvals_of_run(pool: Pool, run_id: str, tenant: str) -> list[dict[str, Any]]:
    """The approvals ``run_id`` raised or carried the decision of, oldest first (``tenant``'s)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_approvals "
            "WHERE (run_id = %(run)s OR resume_run_id = %(run)s) AND tenant_id = %(tenant)s "
            "ORDER BY created_at, approval_id",
            {"run": run_id, "tenant": tenant},
        )
        rows = await cursor.fetchall()
    return [_approval(row) for row in rows]


async def pending_of_interrupt_in(
    conn: AsyncConnection[DictRow], thread_id: str, interrupt_id: str
) -> str | None:
    """The id of the pending approval that asks ``interrupt_id`` of the thread, if any."""
    cursor = await conn.execute(
        "SELECT approval_id FROM plait_approvals "
        "WHERE thread_id = %s AND interrupt_id = %s AND status = 'pending'",
        (thread_id, interrupt_id),
    )
    row = await cursor.fetchone()
    return str(row["approval_id"]) if row is not None else None


async def lock_pending_in(conn: AsyncConnection[DictRow], approval_id: str) -> dict[str, Any]:
    """Lock the approval's row for a decision; raise unless it is still pending."""
    cursor = await conn.execute(
        f"SELECT {_COLUMNS} FROM plait_approvals WHERE approval_id = %s FOR UPDATE",
        (approval_id,),
    )
    row = await cursor.fetchone()
    if row is None:
        raise ApprovalNotFound(approval_id)
    if row["status"] != "pending":
        raise ApprovalClosed(_approval(row))
    return dict(row)


async def mark_decided_in(
    conn: AsyncConnection[DictRow],
    approval_id: str,
    status: str,
    answer: Mapping[str, Any],
    actor: str | None,
) -> None:
    """Record the decision on the locked row.

    Marked before the resume run is created, so the run's own settling of
    ``command.resume`` (:func:`settle_answered_in`) finds nothing pending.
    """
    await conn.execute(
        """
        UPDATE plait_approvals
        SET status = %s, decision = %s, decided_by = %s, decided_at = now()
        WHERE approval_id = %s
        """,
        (status, Json(dict(answer)), actor, approval_id),
    )


async def set_resume_run_in(
    conn: AsyncConnection[DictRow], approval_id: str, run_id: str
) -> dict[str, Any]:
    """Link the decided approval to the run that resumes its thread; return the approval."""
    cursor = await conn.execute(
        f"UPDATE plait_approvals SET resume_run_id = %s WHERE approval_id = %s "
        f"RETURNING {_COLUMNS}",
        (run_id, approval_id),
    )
    row = await cursor.fetchone()
    if row is None:  # cannot happen: the row is locked by this transaction
        raise ApprovalNotFound(approval_id)
    return _approval(row)


async def settle_answered_in(
    conn: AsyncConnection[DictRow], thread_id: str, run_id: str, kwargs: Mapping[str, Any]
) -> None:
    """Mark the approvals a ``command.resume`` answers as decided (inbox stays true).

    A map resumes interrupts by id; a single value resumes the thread's only
    pending interrupt, as LangGraph does. An answer that is not a valid
    decision leaves its approval pending (the node fails and asks again). One
    statement, whose result is not read: in a pipeline it costs no round trip.
    """
    command = kwargs.get("command")
    if not isinstance(command, Mapping) or "resume" not in command:
        return
    resume = command["resume"]
    await conn.execute(
        _SETTLE_ANSWERED,
        {
            "thread_id": thread_id,
            "run_id": run_id,
            "resume": Json(resume),
            "by_id": isinstance(resume, Mapping),
            "decisions": list(DECISION_STATUS),
            "statuses": list(DECISION_STATUS.values()),
        },
    )


# The answers: a map's values for the pending interrupts it names; else, with
# exactly one pending interrupt, the whole value. Each answer with a valid
# `decision` decides its approval.
_SETTLE_ANSWERED = """
WITH pending AS (
    SELECT approval_id, interrupt_id FROM plait_approvals
    WHERE thread_id = %(thread_id)s AND status = 'pending'
    FOR UPDATE
), named AS (
    SELECT p.approval_id, %(resume)s::json -> p.interrupt_id AS answer
    FROM pending p
    WHERE %(by_id)s AND %(resume)s::json -> p.interrupt_id IS NOT NULL
), answers AS (
    SELECT approval_id, answer FROM named
    UNION ALL
    SELECT p.approval_id, %(resume)s::json FROM pending p
    WHERE NOT EXISTS (SELECT FROM named) AND (SELECT count(*) FROM pending) = 1
), statuses AS (
    SELECT * FROM unnest(%(decisions)s::text[], %(statuses)s::text[]) AS s(decision, status)
)
UPDATE plait_approvals a
SET status = statuses.status, decision = answers.answer, decided_at = now(),
    resume_run_id = %(run_id)s
FROM answers
JOIN statuses ON json_typeof(answers.answer) = 'object'
             AND statuses.decision = answers.answer ->> 'decision'
WHERE a.approval_id = answers.approval_id
"""


def _approval(row: Mapping[str, Any]) -> dict[str, Any]:
    """JSON-ready approval."""
    result = dict(row)
    for key in ("expires_at", "created_at", "decided_at"):
        value = result.get(key)
        result[key] = value.isoformat() if isinstance(value, datetime) else value
    return result
