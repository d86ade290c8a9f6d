"""Run scores in SQL (table ``plait_run_scores``): owed with a run's end, claimed, settled, read.

A sampled run owes each of its spec's graders one score. The rows are written in
the transaction that records the run's end (:func:`enqueue`, called by
``runs.finish_run``), so a run that ended owes exactly one score per grader and a
run that did not owes none. Workers claim owed rows under a lease (``FOR UPDATE
SKIP LOCKED``: one grader call per row at a time, whatever the number of
workers) and settle them as ``scored`` or ``failed``; a worker that dies
mid-grade leaves its lease to expire, and the row is claimed again, up to
``max_attempts`` claims in all (then it fails as ``worker lost``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from psycopg import AsyncConnection
from psycopg.rows import DictRow

from plait.engine.store import Pool

ScoreStatus = Literal["pending", "scored", "failed"]

_COLUMNS = (
    "run_id, grader, tenant_id, thread_id, graph, version, digest, status, score, reason, "
    "error, attempts, created_at, scored_at"
)


@dataclass(frozen=True)
class ScoreJob:
    """One score a worker holds: which run, which grader, which claim this is."""

    run_id: str
    grader: str
    tenant: str
    thread_id: str
    graph: str
    version: str
    digest: str
    attempt: int


@dataclass(frozen=True)
class GraderSummary:
    """One grader's scores of one version of a graph."""

    version: str
    grader: str
    scored: int
    failed: int
    pending: int
    mean: float | None

    def to_api(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "version": self.version,
            "grader": self.grader,
            "count": self.scored,
            "mean": self.mean,
            "failed": self.failed,
            "pending": self.pending,
        }


async def enqueue(conn: AsyncConnection[DictRow], run_id: str, graders: Sequence[str]) -> None:
    """Owe one score per grader of ``graders`` for the run (in the transaction of its end).

    A run that ends twice (a requeued one) owes each score once.
    """
    if not graders:
        return
    await conn.execute(
        """
        INSERT INTO plait_run_scores (run_id, grader, tenant_id, thread_id, graph, version, digest)
        SELECT r.run_id, g.grader, r.tenant_id, r.thread_id, r.graph, r.version, r.digest
        FROM plait_runs r, unnest(%s::text[]) AS g(grader)
        WHERE r.run_id = %s
        ON CONFLICT (run_id, grader) DO NOTHING
        """,
        (list(graders), run_id),
    )


async def claim(
    pool: Pool, owner: str, limit: int, lease_seconds: float, max_attempts: int
) -> list[ScoreJob]:
    """Take up to ``limit`` owed scores under a lease; rows claimed ``max_attempts`` times
    already (their workers died) fail instead."""
    async with pool.connection() as conn:
        await conn.execute(
            """
            UPDATE plait_run_scores
            SET status = 'failed', error = 'worker lost: the grader''s worker stopped '
                    || attempts || ' times before it recorded a score',
                lease_owner = NULL, lease_expires_at = NULL, scored_at = now()
            WHERE status = 'pending' AND attempts >= %s AND lease_expires_at < now()
            """,
            (max_attempts,),
        )
        cursor = await conn.execute(
            f"""
            UPDATE plait_run_scores s
            SET lease_owner = %(owner)s, attempts = s.attempts + 1,
                lease_expires_at = now() + make_interval(secs => %(lease)s)
            WHERE (s.run_id, s.grader) IN (
                SELECT run_id, grader FROM plait_run_scores
                WHERE status = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at < now())
                ORDER BY created_at
                LIMIT %(limit)s
                FOR UPDATE SKIP LOCKED
            )
            RETURNING {_COLUMNS}
            """,
            {"owner": owner, "lease": lease_seconds, "limit": limit},
        )
        rows = await cursor.fetchall()
    return [_job(row) for row in rows]


async def settle(
    pool: Pool,
    job: ScoreJob,
    owner: str,
    *,
    score: float | None = None,
    reason: str | None = None,
    error: str | None = None,
) -> bool:
    """Record ``job``'s score (or, with ``error``, its failure); False when ``owner`` no
    longer held it (its lease expired and another worker took it)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            """
            UPDATE plait_run_scores
            SET status = CASE WHEN %(error)s::text IS NULL THEN 'scored' ELSE 'failed' END,
                score = %(score)s, reason = %(reason)s, error = %(error)s, scored_at = now(),
                lease_owner = NULL, lease_expires_at = NULL
            WHERE run_id = %(run_id)s AND grader = %(grader)s AND lease_owner = %(owner)s
              AND attempts = %(attempt)s AND status = 'pending'
            """,
            {
                "score": score,
                "reason": reason,
                "error": error,
                "run_id": job.run_id,
                "grader": job.grader,
                "owner": owner,
                "attempt": job.attempt,
            },
        )
        return cursor.rowcount > 0


async def release(pool: Pool, job: ScoreJob, owner: str) -> None:
    """Hand ``job`` back unscored (its worker stops): claimable at once, the claim not counted."""
    async with pool.connection() as conn:
        await conn.execute(
            """
            UPDATE plait_run_scores
            SET lease_owner = NULL, lease_expires_at = NULL, attempts = attempts - 1
            WHERE run_id = %s AND grader = %s AND lease_owner = %s AND attempts = %s
              AND status = 'pending'
            """,
            (job.run_id, job.grader, owner, job.attempt),
        )


async def scores_of_runs(
    pool: Pool, run_ids: Sequence[str], tenant: str
) -> dict[str, list[dict[str, Any]]]:
    """The scores of ``run_ids`` that are ``tenant``'s, by run id, graders in name order."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_run_scores "
            "WHERE run_id = ANY(%s) AND tenant_id = %s ORDER BY run_id, grader",
            (list(run_ids), tenant),
        )
        rows = await cursor.fetchall()
    found: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        found.setdefault(row["run_id"], []).append(score_to_api(row))
    return found


async def summary(pool: Pool, tenant: str, graph: str) -> list[GraderSummary]:
    """Count and mean of ``graph``'s scores per version and grader, newest version first."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            """
            SELECT version, grader,
                   count(*) FILTER (WHERE status = 'scored') AS scored,
                   count(*) FILTER (WHERE status = 'failed') AS failed,
                   count(*) FILTER (WHERE status = 'pending') AS pending,
                   avg(score) FILTER (WHERE status = 'scored') AS mean
            FROM plait_run_scores
            WHERE tenant_id = %s AND graph = %s
            GROUP BY version, grader
            ORDER BY max(created_at) DESC, grader
            """,
            (tenant, graph),
        )
        rows = await cursor.fetchall()
    return [
        GraderSummary(
            version=row["version"],
            grader=row["grader"],
            scored=row["scored"],
            failed=row["failed"],
            pending=row["pending"],
            mean=None if row["mean"] is None else float(row["mean"]),
        )
        for row in rows
    ]


def score_to_api(row: Mapping[str, Any]) -> dict[str, Any]:
    """One score as the API shows it."""
    return {
        "run_id": row["run_id"],
        "grader": row["grader"],
        "status": row["status"],
        "score": row["score"],
        "reason": row["reason"],
        "error": row["error"],
        "graph": row["graph"],
        "version": row["version"],
        "digest": row["digest"],
        "attempts": row["attempts"],
        "created_at": _iso(row["created_at"]),
        "scored_at": _iso(row["scored_at"]),
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _job(row: Mapping[str, Any]) -> ScoreJob:
    return ScoreJob(
        run_id=row["run_id"],
        grader=row["grader"],
        tenant=row["tenant_id"],
        thread_id=row["thread_id"],
        graph=row["graph"],
        version=row["version"],
        digest=row["digest"],
        attempt=row["attempts"],
    )
