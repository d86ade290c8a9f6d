"""A thread's runs as a recording (``GET /threads/{thread_id}/recording``), for ``plait replay``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from plait.engine.run import RecordingError, record_thread
from plait.server.api.checkpoints import thread_graph_version
from plait.server.api.deps import Svc
from plait.server.api.threads import get_thread_or_404
from plait.server.auth.keys import Tenant
from plait.server.http.problems import Problem

router = APIRouter(tags=["threads"])


@router.get("/threads/{thread_id}/recording", summary="A thread's runs as a recording")
async def thread_recording(thread_id: str, services: Svc, tenant: Tenant) -> dict[str, Any]:
    """The thread's input, approval decisions, model replies, tool results, remote
    agents' answers, path and ending as a `plait-recording/v1` document: save it and
    run `plait replay FILE --spec SPEC [--against NEW]` to run it again with nothing
    called (docs/testing.md). Model replies are kept only when the spec sets `audit:
    {model_calls: true}`: a thread that called a model without it answers 409
    `recording-incomplete`, as does one whose remote agents' answers were not kept.
    """
    thread = await get_thread_or_404(services, thread_id, tenant)
    graph = await thread_graph_version(services, thread)
    if graph is None:
        raise Problem(
            409,
            f"thread {thread_id} has not run yet: there is nothing to record",
            kind="recording-incomplete",
            title="Nothing to record",
        )
    compiled = await services.graphs.get(graph.name, graph.version, tenant)
    try:
        recording = await record_thread(compiled, services.pool, thread_id, thread["thread_id"])
    except RecordingError as exc:
        raise Problem(
            409, str(exc), kind="recording-incomplete", title="Nothing to record"
        ) from None
    return recording.to_json()
