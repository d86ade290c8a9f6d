"""Scores and trajectories: what graders said of runs, and the runs as graders see them.

``GET /runs/{run_id}/scores`` (one run's), ``GET /graphs/{name}/scores`` (count and
mean per version and grader), ``GET /threads/{tid}/runs/{rid}/trajectory`` (one
run's steps) and ``GET /graphs/{name}/trajectories`` (every ended run of a graph
as JSON Lines, streamed a page of runs at a time). A tenant sees only its own:
another tenant's run or graph answers as a free name would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from plait.engine.compiler import CompiledSpec
from plait.server.api.deps import Services, Svc
from plait.server.auth.keys import Tenant
from plait.server.http.problems import not_found
from plait.server.queue import scores, threads
from plait.server.queue.runs import Run, ended_runs_of_graph, get_run
from plait.server.queue.trajectories import export_lines, trajectory

router = APIRouter(tags=["evaluation"])

#: Media type of the JSON Lines export (one JSON object per line).
NDJSON = "application/x-ndjson"
#: Runs read from Postgres at a time by the export.
EXPORT_PAGE = 50


@router.get("/runs/{run_id}/scores", summary="A run's scores")
async def run_scores(run_id: str, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """What each grader of the run's spec said of it: ``scored`` (a ``score`` 0..1 and its
    ``reason``), ``failed`` (its ``error``) or ``pending``. A run outside the sample, or of a
    spec without ``evaluation``, has none."""
    run = await get_run(services.pool, run_id, tenant=tenant)
    if run is None:
        raise not_found(f"run {run_id}")
    found = await scores.scores_of_runs(services.pool, [run_id], tenant)
    return {"run_id": run_id, "scores": found.get(run_id, [])}


@router.get("/graphs/{name}/scores", summary="A graph's scores per version and grader")
async def graph_scores(name: str, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """Per version (newest first) and grader: how many runs were scored, their mean
    score, and how many failed or are still pending."""
    found = await scores.summary(services.pool, tenant, name)
    return {"graph": name, "scores": [entry.to_api() for entry in found]}


@router.get("/threads/{thread_id}/runs/{run_id}/trajectory", summary="A run's trajectory")
async def run_trajectory(
    thread_id: str, run_id: str, services: Svc, tenant: Tenant
) -> dict[str, Any]:
    """The run's steps in order (node, input, output, tool calls, approvals and their
    decisions), its input, output, outcome and usage, secrets masked: the object a grader
    gets, and one line of the JSON Lines export."""
    stored = threads.stored_thread_id(tenant, thread_id)
    run = await get_run(services.pool, run_id, stored, tenant=tenant)
    if run is None:
        raise not_found(f"run {run_id}", f"run {run_id} not found on thread {thread_id}")
    return await trajectory(services.pool, run, await _compiled(services, run))


@router.get(
    "/graphs/{name}/trajectories",
    summary="Trajectories of a graph's runs as JSON Lines",
    response_class=StreamingResponse,
    responses={200: {"content": {NDJSON: {}}}},
)
async def graph_trajectories(
    name: str,
    services: Svc,
    tenant: Tenant,
    version: Annotated[str | None, Query(description="Only runs of this version.")] = None,
    since: Annotated[
        datetime | None, Query(description="Only runs created at or after this time (ISO 8601).")
    ] = None,
) -> StreamingResponse:
    """Every ended run of the graph, oldest first, one trajectory per line
    (``application/x-ndjson``). Streamed: runs are read a page at a time as the client
    reads, so an export of many runs never sits in the server's memory."""
    pages = ended_runs_of_graph(
        services.pool, name, tenant=tenant, version=version, since=since, page_size=EXPORT_PAGE
    )

    async def compiled_of(run: Run) -> CompiledSpec:
        return await _compiled(services, run)

    async def lines() -> AsyncIterator[bytes]:
        async for line in export_lines(services.pool, pages, compiled_of):
            yield orjson.dumps(line) + b"\n"

    return StreamingResponse(lines(), media_type=NDJSON)


async def _compiled(services: Services, run: Run) -> CompiledSpec:
    return await services.graphs.get(run.graph, run.version, run.tenant)
