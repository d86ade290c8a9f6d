"""Which versions of a graph ran lately: runs and threads started per version in a window,
and the rollout report built on them (``GET /graphs/{name}/rollout``, ``plait rollout show``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from plait.engine.store import Pool
from plait.server.graphs.rollouts import get_rollout, rollout_to_api


@dataclass(frozen=True)
class VersionCount:
    """Runs created on one version of a graph in the window, and the threads they ran on."""

    version: str
    runs: int
    threads: int


async def runs_by_version(
    pool: Pool, graph: str, tenant: str, window: timedelta
) -> list[VersionCount]:
    """The tenant's runs of ``graph`` created in the last ``window``, per version
    (index ``plait_runs_tenant_graph_created``), most runs first."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            """
            SELECT version, count(*) AS runs, count(DISTINCT thread_id) AS threads
            FROM plait_runs
            WHERE tenant_id = %s AND graph = %s AND created_at > now() - %s
            GROUP BY version ORDER BY runs DESC, version
            """,
            (tenant, graph, window),
        )
        return [
            VersionCount(row["version"], row["runs"], row["threads"])
            for row in await cursor.fetchall()
        ]


async def rollout_report(pool: Pool, graph: str, tenant: str, window: timedelta) -> dict[str, Any]:
    """The tenant's rollout of ``graph`` (stable, canary, share) and, per version, the
    runs created on it in ``window`` with its role in the rollout (``None``: neither)."""
    rollout = await get_rollout(pool, graph, tenant)
    counts = await runs_by_version(pool, graph, tenant, window)
    return {
        **rollout_to_api(graph, rollout),
        "window_hours": round(window.total_seconds() / 3600),
        "versions": [
            {
                "version": count.version,
                "role": rollout.role(count.version) if rollout else None,
                "runs": count.runs,
                "threads": count.threads,
            }
            for count in counts
        ],
    }
