"""Durable timers (table ``plait_timers``, migration 0023): the one owner of its SQL.

A timer answers one interrupt of a parked run at a time: a ``wait`` node's
``until`` (kind ``wait``), or an approval's ``expires_at`` (kind
``approval_expiry``). The worker that parks the run writes them
(:func:`record_in`, in the transaction that records its approvals); any worker
fires a due one (server/workers/timer_firer.py) by :func:`take_in` under the
thread's lock, which marks it fired only if it is still pending, so it fires
once across every worker and restart. A resume that answers its interrupt
first (a person, a decision) or a cancel of its run cancels it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from psycopg import AsyncConnection
from psycopg.rows import DictRow

from plait.engine.run import waits_until
from plait.engine.store import Pool
from plait.server.approvals.records import ParkedRun

TimerKind = Literal["wait", "approval_expiry"]

_COLUMNS = (
    "timer_id::text AS timer_id, tenant_id, thread_id, run_id, interrupt_id, node, kind, "
    "graph, version, due_at, status, fired_at, resume_run_id"
)


@dataclass(frozen=True)
class Timer:
    """One timer row."""

    timer_id: str
    tenant: str
    thread_id: str
    run_id: str
    interrupt_id: str
    node: str | None
    kind: TimerKind
    graph: str
    version: str
    due_at: datetime
    status: str
    fired_at: datetime | None
    resume_run_id: str | None


def _timer(row: Mapping[str, Any]) -> Timer:
    return Timer(
        timer_id=row["timer_id"],
        tenant=row["tenant_id"],
        thread_id=row["thread_id"],
        run_id=row["run_id"],
        interrupt_id=row["interrupt_id"],
        node=row["node"],
        kind=row["kind"],
        graph=row["graph"],
        version=row["version"],
        due_at=row["due_at"],
        status=row["status"],
        fired_at=row["fired_at"],
        resume_run_id=row["resume_run_id"],
    )


def _due_of(value: Any) -> tuple[TimerKind, str] | None:
    """The kind and due time of the timer an interrupt's value asks for, if any."""
    until = waits_until(value)
    if until is not None:
        return "wait", until
    if isinstance(value, Mapping) and value.get("kind") == "approval" and value.get("expires_at"):
        return "approval_expiry", str(value["expires_at"])
    return None


async def record_in(
    conn: AsyncConnection[DictRow], run: ParkedRun, interrupts: list[dict[str, Any]]
) -> int:
    """Write the timers of the interrupts ``run`` stopped on; return how many are new.

    ``interrupts`` are ``{id, value}``. Recording the same interrupt again (a
    reclaimed run, a thread resumed for another of its interrupts) keeps the
    first row, so its time does not move.
    """
    written = 0
    for item in interrupts:
        due = _due_of(item.get("value"))
        if due is None:
            continue
        kind, due_at = due
        cursor = await conn.execute(
            """
            INSERT INTO plait_timers (
                tenant_id, thread_id, run_id, interrupt_id, node, kind, graph, version, due_at
            )
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::timestamptz)
            ON CONFLICT (thread_id, interrupt_id) DO NOTHING
            """,
            (
                run.tenant,
                run.thread_id,
                run.run_id,
                item["id"],
                item["value"].get("node"),
                kind,
                run.graph,
                run.version,
                due_at,
            ),
        )
        written += cursor.rowcount
    return written


async def due(pool: Pool, limit: int) -> list[Timer]:
    """Pending timers whose time has come, earliest first (not locked: see :func:`take_in`).

    Only once their run has parked: a timer is written just before its run's
    end is, and a short one must not resume the thread ahead of that end (nor
    while a worker that took the run over after a crash runs it again).
    """
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_timers t WHERE status = 'pending' AND due_at <= now() "
            "AND NOT EXISTS (SELECT FROM plait_runs r WHERE r.run_id = t.run_id "
            "AND r.status IN ('pending', 'running')) "
            "ORDER BY due_at LIMIT %s",
            (limit,),
        )
        return [_timer(row) for row in await cursor.fetchall()]


async def take_in(conn: AsyncConnection[DictRow], timer_id: str) -> Timer | None:
    """Mark a pending timer fired; ``None`` when it is not pending any more.

    Call in the transaction that creates its resume run, under its thread's
    lock: a second worker blocks on the row and then finds it fired.
    """
    cursor = await conn.execute(
        f"UPDATE plait_timers SET status = 'fired', fired_at = now() "
        f"WHERE timer_id = %s AND status = 'pending' RETURNING {_COLUMNS}",
        (timer_id,),
    )
    row = await cursor.fetchone()
    return _timer(row) if row is not None else None


async def set_resume_run_in(
    conn: AsyncConnection[DictRow], timer_id: str, run_id: str | None
) -> None:
    """Note the run a fired timer created (``None``: it resolved nothing, e.g. decided first)."""
    await conn.execute(
        "UPDATE plait_timers SET resume_run_id = %s WHERE timer_id = %s", (run_id, timer_id)
    )


async def settle_answered_in(
    conn: AsyncConnection[DictRow], thread_id: str, kwargs: Mapping[str, Any]
) -> None:
    """Cancel the pending timers a new run on ``thread_id`` makes moot.

    A ``command.resume`` map cancels the timers of the interrupts it answers; a
    single resume value answers the thread's interrupts, so it cancels them all.
    A new input leaves the parked run behind: its ``wait`` timers go too (an
    approval stays in the inbox, so its expiry stays). Call under the thread's lock.
    """
    command = kwargs.get("command")
    if isinstance(command, Mapping) and "resume" in command:
        resume = command["resume"]
        if isinstance(resume, Mapping):
            await conn.execute(
                "UPDATE plait_timers SET status = 'cancelled' "
                "WHERE thread_id = %s AND status = 'pending' AND interrupt_id = ANY(%s)",
                (thread_id, [str(key) for key in resume]),
            )
        else:
            await conn.execute(
                "UPDATE plait_timers SET status = 'cancelled' "
                "WHERE thread_id = %s AND status = 'pending'",
                (thread_id,),
            )
        return
    await conn.execute(
        "UPDATE plait_timers SET status = 'cancelled' "
        "WHERE thread_id = %s AND status = 'pending' AND kind = 'wait'",
        (thread_id,),
    )


async def move_pending_in(
    conn: AsyncConnection[DictRow],
    thread_id: str,
    version: str,
    moved: Mapping[str, tuple[str, str]],
) -> int:
    """Point the thread's pending timers at their interrupts on ``version`` after an upgrade
    (``moved``: old interrupt id to its new id and node), so they resume the new version's
    interrupt. Returns how many."""
    count = 0
    for old_id, (new_id, node) in moved.items():
        cursor = await conn.execute(
            """
            UPDATE plait_timers SET interrupt_id = %s, node = %s, version = %s
            WHERE thread_id = %s AND interrupt_id = %s AND status = 'pending'
            """,
            (new_id, node, version, thread_id, old_id),
        )
        count += cursor.rowcount
    return count


async def give_up(pool: Pool, timer_id: str) -> bool:
    """Cancel a pending timer that can never fire (its graph version is gone); True if it was."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "UPDATE plait_timers SET status = 'cancelled' "
            "WHERE timer_id = %s AND status = 'pending'",
            (timer_id,),
        )
        return cursor.rowcount == 1


async def cancel_of_run_in(conn: AsyncConnection[DictRow], run_id: str) -> int:
    """Cancel the pending timers of parked run ``run_id``; return how many."""
    cursor = await conn.execute(
        "UPDATE plait_timers SET status = 'cancelled' WHERE run_id = %s AND status = 'pending'",
        (run_id,),
    )
    return cursor.rowcount


async def timers_of_run(pool: Pool, run_id: str) -> list[Timer]:
    """Every timer run ``run_id`` parked on, earliest first."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_timers WHERE run_id = %s ORDER BY due_at, interrupt_id",
            (run_id,),
        )
        return [_timer(row) for row in await cursor.fetchall()]


async def pending_counts(conn: AsyncConnection[DictRow]) -> dict[str, int]:
    """Pending timers by kind (for ``/metrics``; every tenant)."""
    cursor = await conn.execute(
        "SELECT kind, count(*) AS n FROM plait_timers WHERE status = 'pending' GROUP BY kind"
    )
    return {str(row["kind"]): int(row["n"]) for row in await cursor.fetchall()}
