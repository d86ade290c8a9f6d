"""Runs: create (background, stream, wait), join, rejoin a stream, cancel, list, get, delete.

A ``thread_id`` in a path is the client's: the routes turn it into the
caller's tenant's stored id (``plait.server.queue.threads.stored_thread_id``) before
anything reads it, and runs name their thread by the client's id again.

A run-creating POST only inserts the run (``plait.server.queue.runs.creating_run``: the
thread is locked while the assistant and rollout are read, so choosing the version
costs no round trip of its own);
a worker executes it (this process's own at once when it has room:
``plait.server.workers.direct_start``) and writes its events to the journal, which the
streaming routes relay as SSE. ``Idempotency-Key`` makes a retried POST
return the run of the first one. Stateless routes (``/runs/...``) run on a
temporary thread, deleted when the run ends unless ``on_completion`` is
``keep``.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from langchain_core.runnables import RunnableConfig
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)
from sse_starlette import EventSourceResponse

from plait.engine.governance import read_usage
from plait.engine.run import RunStatus, check_input
from plait.engine.spec import duration_seconds
from plait.engine.store import new_checkpointer
from plait.server.api.assistants import resolve_assistant
from plait.server.api.checkpoints import thread_state, values_with_interrupts
from plait.server.api.deps import Services, Svc
from plait.server.api.stream_modes import StreamMode, query_stream_modes
from plait.server.auth.keys import Tenant
from plait.server.auth.store import DEFAULT_TENANT
from plait.server.graphs import rollouts
from plait.server.graphs.rollouts import Rollout
from plait.server.graphs.versions import GraphVersion, get_version, is_assistant_uuid
from plait.server.http.problems import Problem, not_found
from plait.server.http.sse import coalesced, event_names, journal_frame_batches, sse_response
from plait.server.operations import metrics
from plait.server.operations.metrics import RolloutLabel
from plait.server.queue import scores, threads
from plait.server.queue.journal import Followed, JournalEvent, one_by_one, resume_point
from plait.server.queue.queueing import HIGHEST_PRIORITY, LOWEST_PRIORITY, Queueing
from plait.server.queue.runs import (
    TERMINAL,
    Run,
    RunCreation,
    cancel_run,
    delete_run,
    first_event,
    get_run,
    hash_request,
    list_runs,
    requeue_run,
)
from plait.server.workers.direct_start import create_and_start
from plait.server.workers.webhook_urls import WebhookPolicy, WebhookRefused, check_webhook_url

router = APIRouter(tags=["runs"])

IDEMPOTENCY_NAMESPACE = uuid.UUID("0c5e6a0e-8f0b-5b3e-9d1c-706c61697402")


class RunCommand(BaseModel):
    """``command``: resume interrupts, update state, or go to nodes."""

    resume: Any = None
    update: Any = None
    goto: Any = None


#: Prefix of the metadata and configurable keys only the server sets.
RESERVED_PREFIX = "plait_"


class RunCreate(BaseModel):
    """Body of every run-creating POST (fields of the Agent Server protocol).

    Fields the protocol has and Plait ignores (``feedback_keys``,
    ``langsmith_tracer``, ``checkpoint_during``) are accepted and dropped.
    """

    model_config = ConfigDict(extra="ignore")

    assistant_id: str
    input: Any = None
    command: RunCommand | None = None
    stream_mode: StreamMode | list[StreamMode] = "values"
    stream_subgraphs: bool = False
    stream_resumable: bool = False
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None
    checkpoint_id: str | None = None
    interrupt_before: Literal["*"] | list[str] | None = None
    interrupt_after: Literal["*"] | list[str] | None = None
    multitask_strategy: Literal["reject", "interrupt", "rollback", "enqueue"] = "enqueue"
    if_not_exists: Literal["create", "reject"] = "reject"
    on_disconnect: Literal["cancel", "continue"] = "continue"
    on_completion: Literal["delete", "keep"] = "delete"
    durability: Literal["sync", "async", "exit"] | None = None
    after_seconds: float | None = Field(None, ge=0)
    #: Plait's: which of the tenant's queued runs starts first, 0 (lowest) to 9 (default: the
    #: spec's ``queue.priority``, else 5).
    priority: int | None = Field(None, ge=LOWEST_PRIORITY, le=HIGHEST_PRIORITY)
    #: Plait's: not started by then, the run ends ``expired`` and never runs.
    expires_at: AwareDatetime | None = None
    #: Plait's: the same as a wait from when the run may start (seconds, or ``"10m"``).
    expires_in: float | str | None = None
    #: Called with the run when it ends (server/workers/webhook_sender.py); checked at creation.
    webhook: str | None = Field(None, max_length=2048)

    # plait_* keys carry what the server knows (tenant, trace, graph digest,
    # approval): a client must not be able to set them.
    @field_validator("metadata")
    @classmethod
    def _no_server_metadata(cls, metadata: dict[str, Any] | None) -> dict[str, Any] | None:
        _refuse_reserved(metadata or {}, "metadata")
        return metadata

    @field_validator("expires_at")
    @classmethod
    def _future_deadline(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        if value is None:
            return None
        start = datetime.now(UTC) + timedelta(seconds=info.data.get("after_seconds") or 0)
        if value <= start:
            raise ValueError(
                f"{value.isoformat()} is not after the run may start "
                f"({start.isoformat(timespec='seconds')}): a run that expires before it can "
                "start never runs; give a later time, or leave it out"
            )
        return value

    @field_validator("expires_in")
    @classmethod
    def _expires_in_seconds(cls, value: float | str | None, info: ValidationInfo) -> float | None:
        if value is None:
            return None
        if info.data.get("expires_at") is not None:
            raise ValueError("give expires_at or expires_in, not both")
        try:
            seconds = duration_seconds(value)
        except ValueError:
            raise ValueError(
                f"{value!r} is not a duration: give seconds (e.g. 600) or a string like "
                '"90s", "10m", "2h"'
            ) from None
        if seconds <= 0:
            raise ValueError("must be more than 0 seconds (leave it out for no deadline)")
        return seconds

    @field_validator("config")
    @classmethod
    def _no_server_config(cls, config: dict[str, Any] | None) -> dict[str, Any] | None:
        _refuse_reserved((config or {}).get("configurable") or {}, "config.configurable")
        return config


def _refuse_reserved(keys: Iterable[Any], where: str) -> None:
    """Raise :class:`ValueError` naming the keys of ``where`` only the server may set."""
    reserved = sorted(str(key) for key in keys if str(key).startswith(RESERVED_PREFIX))
    if reserved:
        raise ValueError(
            f"{where} keys starting with {RESERVED_PREFIX!r} are set by the server: "
            f"remove {', '.join(reserved)}"
        )


#: Longest Idempotency-Key accepted.
MAX_IDEMPOTENCY_KEY = 255


async def _idempotency_key(
    key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> str | None:
    """The request's Idempotency-Key, refused unless it is 1-255 printable ASCII characters
    (async, so FastAPI calls it inline, not in its thread pool).

    An empty key would be stored like any other: every later request with an
    empty key would then be a "retry" of the first (docs/api.md).
    """
    if key is None:
        return None
    if (
        not key.strip()
        or len(key) > MAX_IDEMPOTENCY_KEY
        or not (key.isascii() and key.isprintable())
    ):
        what = (
            "is empty"
            if not key.strip()
            else f"is {len(key)} characters long"
            if len(key) > MAX_IDEMPOTENCY_KEY
            else "holds characters that are not printable ASCII"
        )
        raise Problem(
            422,
            f"the Idempotency-Key header {what}: a key is 1 to {MAX_IDEMPOTENCY_KEY} printable "
            "ASCII characters, e.g. a UUID; leave the header out to send no key",
            kind="request-invalid",
            title="Invalid request",
        )
    return key


IdempotencyKey = Annotated[str | None, Depends(_idempotency_key)]


# ----------------------------------------------------------------------- on a thread


@router.post("/threads/{thread_id}/runs", summary="Create a background run")
async def create_background(
    thread_id: str,
    body: RunCreate,
    request: Request,
    services: Svc,
    tenant: Tenant,
    key: IdempotencyKey,
) -> JSONResponse:
    """Queue a run and return it at once; follow it with join or the stream routes."""
    run, _ = await _create(services, request, body, thread_id, key, tenant)
    return _run_response(run)


@router.post(
    "/threads/{thread_id}/runs/stream",
    summary="Create a run and stream its events (SSE)",
    response_class=EventSourceResponse,
)
async def create_stream(
    thread_id: str,
    body: RunCreate,
    request: Request,
    services: Svc,
    tenant: Tenant,
    key: IdempotencyKey,
) -> EventSourceResponse:
    """Queue a run and stream its events; ``Location`` is where to rejoin with ``Last-Event-ID``."""
    run, followed = await _create(services, request, body, thread_id, key, tenant, follow=True)
    return _stream_created(services, run, body, followed)


@router.post("/threads/{thread_id}/runs/wait", summary="Create a run and wait for its result")
async def create_wait(
    thread_id: str,
    body: RunCreate,
    request: Request,
    services: Svc,
    tenant: Tenant,
    key: IdempotencyKey,
) -> JSONResponse:
    """Queue a run, wait until it ends, and return the thread's values (with ``__interrupt__``)."""
    run, followed = await _create(services, request, body, thread_id, key, tenant, follow=True)
    return await _wait_response(services, run, followed)


@router.get("/threads/{thread_id}/runs", summary="List a thread's runs")
async def list_thread_runs(
    thread_id: str,
    services: Svc,
    tenant: Tenant,
    limit: Annotated[int, Query(ge=1, le=1000)] = 10,
    offset: Annotated[int, Query(ge=0)] = 0,
    status: RunStatus | None = None,
) -> list[dict[str, Any]]:
    """The thread's runs, newest first, each with ``plait_scores``: its graders' scores
    (``GET /runs/{run_id}/scores``; empty for a run outside its spec's evaluation sample)."""
    thread = await _thread(services, thread_id, tenant)
    found = await list_runs(
        services.pool, thread["thread_id"], limit=limit, offset=offset, status=status, tenant=tenant
    )
    graded = await scores.scores_of_runs(services.pool, [run.run_id for run in found], tenant)
    return [{**run.to_api(), "plait_scores": graded.get(run.run_id, [])} for run in found]


@router.get("/threads/{thread_id}/runs/{run_id}", summary="Get a run")
async def get_thread_run(
    thread_id: str, run_id: str, services: Svc, tenant: Tenant
) -> dict[str, Any]:
    """One run, with ``usage``: its thread's totals so far (spec budgets; ``null`` without)."""
    run = await _run(services, thread_id, run_id, tenant)
    usage = await read_usage(
        new_checkpointer(services.pool), {"configurable": {"thread_id": run.thread_id}}
    )
    return {**run.to_api(), "usage": usage}


@router.delete("/threads/{thread_id}/runs/{run_id}", summary="Delete a run", status_code=204)
async def delete_thread_run(thread_id: str, run_id: str, services: Svc, tenant: Tenant) -> Response:
    """Delete a finished run and its journal (cancel an active run first)."""
    stored = threads.stored_thread_id(tenant, thread_id)
    await delete_run(services.pool, stored, run_id, tenant=tenant)
    return Response(status_code=204)


@router.get("/threads/{thread_id}/runs/{run_id}/join", summary="Wait for a run to end")
async def join(thread_id: str, run_id: str, services: Svc, tenant: Tenant) -> JSONResponse:
    """Wait until the run ends; return the thread's values (with ``__interrupt__``)."""
    return await _wait_response(services, await _run(services, thread_id, run_id, tenant))


@router.get(
    "/threads/{thread_id}/runs/{run_id}/stream",
    summary="Rejoin a run's event stream (SSE)",
    response_class=EventSourceResponse,
)
async def join_stream(
    thread_id: str,
    run_id: str,
    services: Svc,
    tenant: Tenant,
    modes: Annotated[list[str], Depends(query_stream_modes)],
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
    cancel_on_disconnect: bool = False,
) -> EventSourceResponse:
    """The run's events after ``Last-Event-ID`` (all of them without it), until ``end``."""
    run = await _run(services, thread_id, run_id, tenant)
    after = _seq(last_event_id)
    if after:
        after = await resume_point(services.pool, run_id, after)
    return _stream(services, run, modes, cancel_on_disconnect=cancel_on_disconnect, after=after)


@router.post("/threads/{thread_id}/runs/{run_id}/cancel", summary="Cancel a run")
async def cancel(
    thread_id: str,
    run_id: str,
    services: Svc,
    tenant: Tenant,
    wait: bool = False,
    action: Literal["interrupt", "rollback"] = "interrupt",
) -> JSONResponse:
    """Ask the run to stop (``interrupt`` keeps its work, ``rollback`` deletes it).

    With ``wait=1`` the response comes when the run has stopped.
    """
    stored = threads.stored_thread_id(tenant, thread_id)
    run = await cancel_run(services.pool, stored, run_id, action, tenant=tenant)
    if not wait:
        return _run_response(run, status_code=202)
    await _wait_for_end(services, run)
    return _run_response(await get_run(services.pool, run_id, stored, tenant=tenant) or run)


@router.post("/threads/{thread_id}/runs/{run_id}/requeue", summary="Requeue a dead-lettered run")
async def requeue(thread_id: str, run_id: str, services: Svc, tenant: Tenant) -> JSONResponse:
    """Queue a dead-lettered run again (``pending``), its lost attempts reset.

    It continues from its last checkpoint; its stream (``GET .../stream``)
    goes on with the same seqs, past the dead letter's ``error`` and ``end``.
    409 when the run is not dead-lettered.
    """
    stored = threads.stored_thread_id(tenant, thread_id)
    return _run_response(await requeue_run(services.pool, run_id, stored, tenant=tenant))


# ----------------------------------------------------------------------- stateless


@router.post("/runs", summary="Create a stateless background run")
async def create_stateless(
    body: RunCreate,
    request: Request,
    services: Svc,
    tenant: Tenant,
    key: IdempotencyKey,
) -> JSONResponse:
    """A background run on a new temporary thread."""
    run, _ = await _create(services, request, body, None, key, tenant)
    if _delete_on_completion(body, key):
        services.spawn(_delete_when_done(services, run))
    return _run_response(run)


@router.post(
    "/runs/stream",
    summary="Create a stateless run and stream it (SSE)",
    response_class=EventSourceResponse,
)
async def create_stateless_stream(
    body: RunCreate,
    request: Request,
    services: Svc,
    tenant: Tenant,
    key: IdempotencyKey,
) -> EventSourceResponse:
    """A streamed run on a new temporary thread."""
    run, followed = await _create(services, request, body, None, key, tenant, follow=True)
    if _delete_on_completion(body, key):
        services.spawn(_delete_when_done(services, run))
    return _stream_created(services, run, body, followed)


@router.post("/runs/wait", summary="Create a stateless run and wait for its result")
async def create_stateless_wait(
    body: RunCreate,
    request: Request,
    services: Svc,
    tenant: Tenant,
    key: IdempotencyKey,
) -> JSONResponse:
    """A run on a new temporary thread; returns its final values."""
    run, followed = await _create(services, request, body, None, key, tenant, follow=True)
    response = await _wait_response(services, run, followed)
    if _delete_on_completion(body, key):
        await _delete_thread(services, run.thread_id, tenant)
    return response


# ----------------------------------------------------------------------- helpers


def _delete_on_completion(body: RunCreate, key: str | None) -> bool:
    """Whether a stateless run's temporary thread goes when the run ends.

    Not with an ``Idempotency-Key``: a retry must find the first run, and the
    key's record goes with its thread.
    """
    return body.on_completion == "delete" and key is None


async def _create(
    services: Services,
    request: Request,
    body: RunCreate,
    thread_id: str | None,
    key: str | None,
    tenant: str,
    *,
    follow: bool = False,
) -> tuple[Run, Followed | None]:
    """Insert the tenant's run (the strategy and the idempotency key apply in its transaction).

    ``thread_id`` is the client's (``None``: a stateless run's new temporary thread).
    With ``follow``, the new run's events are followed from before its commit
    (:meth:`JournalListener.follow`: a stream of it needs no first read); ``None``
    for a repeated request's first run, which is read as any other.
    """
    route = f"{request.method} {request.url.path}"
    if body.webhook is not None:
        await check_webhook(body.webhook, services.settings.webhooks)
    graph: GraphVersion | None = None
    rollout: RolloutLabel = "none"
    if thread_id is None:
        # Resolved first: an unknown assistant must not leave a thread behind. The
        # rollout is read beside it (one round trip of latency instead of two).
        stateless, tenant_rollout = await asyncio.gather(
            resolve_assistant(services, body.assistant_id, tenant),
            _rollout_of(services, body.assistant_id, tenant),
        )
        if _checkpoint_id(body):
            raise _no_checkpoint(body, "a stateless run starts on a new thread, which has none")
        # A retried stateless request must land on the same temporary thread,
        # or its idempotency key could not find the first run's thread. Keys
        # are the tenant's: another tenant's same key names another thread.
        scope = route if tenant == DEFAULT_TENANT else f"{tenant}\n{route}"
        thread_id = threads.stored_thread_id(
            tenant,
            str(uuid.uuid5(IDEMPOTENCY_NAMESPACE, f"{scope}\n{key}")) if key else str(uuid.uuid4()),
        )
        if _bare_name(body.assistant_id):
            stateless, rollout = await _new_thread_version(
                services, stateless, thread_id, tenant, tenant_rollout
            )
        _check_interrupts(body, stateless)
        graph = stateless
        await threads.create_thread(
            services.pool,
            thread_id=thread_id,
            metadata={"plait_stateless": True},
            if_exists="do_nothing",
            tenant=tenant,
        )
    else:
        thread_id = threads.stored_thread_id(tenant, thread_id)
    followed: Followed | None = None
    try:
        async with (
            services.creations,
            create_and_start(
                services.worker,
                services.pool,
                thread_id=thread_id,
                idempotency_key=key,
                request_hash=hash_request(await request.json()) if key else None,
                route=route,
                if_not_exists=body.if_not_exists,
                tenant=tenant,
            ) as creation,
        ):
            if follow:
                # Before the commit: no event of the run can be committed unnoticed.
                followed = services.listener.follow(creation.run_id)
            if graph is None:
                # A thread's run: its version is chosen from the thread's row, locked meanwhile.
                graph, rollout = await _graph_for(services, body.assistant_id, creation, tenant)
                _check_interrupts(body, graph)
                await _check_checkpoint(services, body, thread_id)
            else:
                await creation.lock()
            if isinstance(body.input, dict):
                # Refused before a run exists, as `plait run` refuses it.
                check_input(graph.loaded.spec, body.input)
            await creation.insert(
                graph=graph,
                kwargs=run_kwargs(body),
                metadata=body.metadata or {},
                multitask_strategy=body.multitask_strategy,
                after_seconds=body.after_seconds,
                queueing=queueing_of(body),
            )
        run, created = creation.created()
    except BaseException:
        if followed is not None:
            followed.close()
        raise
    if followed is not None and not created:
        followed.close()  # a repeated request: its first run, not the one followed
        followed = None
    if created:
        metrics.run_started(graph.name, graph.version, rollout)
    return run, followed


async def check_webhook(url: str, policy: WebhookPolicy) -> None:
    """A 422 problem unless the server may call ``url`` (server/workers/webhook_urls.py)."""
    try:
        await check_webhook_url(url, policy)
    except WebhookRefused as refused:
        raise Problem(
            422,
            str(refused),
            kind="request-invalid",
            title="Invalid request",
            errors=[{"loc": ["body", "webhook"], "msg": str(refused)}],
        ) from None


def _check_interrupts(body: RunCreate, graph: GraphVersion) -> None:
    """``interrupt_before`` / ``interrupt_after`` name nodes of the graph (or are ``"*"``).

    LangGraph would silently never stop at a name it does not know.
    """
    nodes = list(graph.loaded.spec.spec.nodes)
    for field in ("interrupt_before", "interrupt_after"):
        names = getattr(body, field)
        if names is None or names == "*":
            continue
        unknown = [name for name in names if name not in nodes]
        if unknown:
            raise Problem(
                422,
                f"{field} names {', '.join(repr(n) for n in unknown)}, not a node of "
                f'{graph.ref}; use "*" or nodes of it: {", ".join(nodes)}',
                kind="request-invalid",
                title="Invalid request",
                errors=[{"loc": ["body", field], "msg": f"unknown nodes: {unknown}"}],
            )


def _checkpoint_id(body: RunCreate) -> str | None:
    checkpoint_id = body.checkpoint_id or (body.checkpoint or {}).get("checkpoint_id")
    return str(checkpoint_id) if checkpoint_id else None


async def _check_checkpoint(services: Services, body: RunCreate, thread_id: str) -> None:
    """A run started from ``checkpoint_id`` needs that checkpoint on its thread."""
    checkpoint_id = _checkpoint_id(body)
    if checkpoint_id is None:
        return
    namespace = (body.checkpoint or {}).get("checkpoint_ns") or ""
    config: RunnableConfig = {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": namespace,
            "checkpoint_id": checkpoint_id,
        }
    }
    if await new_checkpointer(services.pool).aget_tuple(config) is None:
        raise _no_checkpoint(
            body,
            f"thread {thread_id} has no such checkpoint; POST /threads/{thread_id}/history "
            "lists its checkpoints",
        )


def _no_checkpoint(body: RunCreate, why: str) -> Problem:
    field = "checkpoint_id" if body.checkpoint_id else "checkpoint.checkpoint_id"
    return Problem(
        422,
        f"{field} {_checkpoint_id(body)!r} is not a checkpoint of this run's thread: {why}",
        kind="request-invalid",
        title="Invalid request",
        errors=[{"loc": ["body", *field.split(".")], "msg": why}],
    )


async def _graph_for(
    services: Services, assistant_id: str, creation: RunCreation, tenant: str
) -> tuple[GraphVersion, RolloutLabel]:
    """The graph version to run and whether a rollout chose it; a bare graph name on a
    thread means the thread's version, on a new thread the rollout's choice (decision 90).

    A thread only continues on the spec it started with, so "the newest
    version" would refuse every thread started before an upgrade. The thread's
    row is the one ``creation`` locks, read beside the assistant (and the
    rollout), on other pooled connections: one round trip of latency before the
    run's insert instead of two. An unknown assistant is told before an
    unknown thread, as when they were read one after the other.
    """
    if not _bare_name(assistant_id):
        named, locked = await asyncio.gather(
            resolve_assistant(services, assistant_id, tenant),
            creation.lock(),
            return_exceptions=True,
        )
        if isinstance(named, BaseException):
            raise named
        if isinstance(locked, BaseException):
            raise locked
        return named, "none"
    # Only a thread's first run needs the rollout, but reading one indexed row
    # costs less than waiting for it.
    graph, thread, tenant_rollout = await asyncio.gather(
        resolve_assistant(services, assistant_id, tenant),
        creation.lock(),
        _rollout_of(services, assistant_id, tenant),
        return_exceptions=True,
    )
    if isinstance(graph, BaseException):
        raise graph
    if isinstance(thread, BaseException):
        raise thread
    if isinstance(tenant_rollout, BaseException):
        raise tenant_rollout
    if thread is not None and thread.get("graph") == graph.name and thread.get("version"):
        if thread["version"] == graph.version:
            return graph, "none"  # a stored version never changes: no second read
        pinned = await get_version(
            services.pool,
            graph.name,
            thread["version"],
            specs_dir=services.settings.specs_dir,
            tenant=tenant,
        )
        if pinned is not None:
            return pinned, "none"
    return await _new_thread_version(services, graph, creation.thread_id, tenant, tenant_rollout)


def _bare_name(assistant_id: str) -> bool:
    """Whether the client named a graph, not one of its versions."""
    return "@" not in assistant_id and not is_assistant_uuid(assistant_id)


async def _rollout_of(services: Services, assistant_id: str, tenant: str) -> Rollout | None:
    """The tenant's rollout of the graph a bare ``assistant_id`` names (``None`` for a version)."""
    if not _bare_name(assistant_id):
        return None
    return await rollouts.get_rollout(services.pool, assistant_id, tenant)


async def _new_thread_version(
    services: Services,
    newest: GraphVersion,
    thread_id: str,
    tenant: str,
    rollout: Rollout | None,
) -> tuple[GraphVersion, RolloutLabel]:
    """The version a thread's first run takes: the choice of ``rollout`` (the tenant's of
    the graph, read by the caller), else ``newest``."""
    chosen = await rollouts.version_of_rollout(
        services.pool, rollout, newest, thread_id, tenant, specs_dir=services.settings.specs_dir
    )
    return chosen if chosen is not None else (newest, "none")


def queueing_of(body: RunCreate) -> Queueing:
    """The run's priority and deadline as the request gives them (the spec fills the rest)."""
    expires_in = body.expires_in if isinstance(body.expires_in, float) else None
    return Queueing(priority=body.priority, expires_at=body.expires_at, expires_in=expires_in)


def run_kwargs(body: RunCreate) -> dict[str, Any]:
    """What the worker needs to execute the run (stored with it)."""
    modes = body.stream_mode if isinstance(body.stream_mode, list) else [body.stream_mode]
    checkpoint_id = _checkpoint_id(body)
    kwargs: dict[str, Any] = {
        "input": body.input,
        "command": body.command.model_dump(exclude_none=True) if body.command else None,
        "config": body.config or {},
        "context": body.context or {},
        "stream_mode": list(dict.fromkeys(modes)),
        "stream_subgraphs": body.stream_subgraphs,
        "stream_resumable": body.stream_resumable,
        "interrupt_before": body.interrupt_before,
        "interrupt_after": body.interrupt_after,
        "checkpoint_id": checkpoint_id,
        "durability": body.durability,
        "on_disconnect": body.on_disconnect,
    }
    if body.webhook is not None:
        kwargs["webhook"] = body.webhook
    return kwargs


def _stream_created(
    services: Services, run: Run, body: RunCreate, followed: Followed | None
) -> EventSourceResponse:
    """Stream a run just created from ``body``; its first event is known without a read,
    and the rest needs none when it was ``followed`` since before its commit."""
    return _stream(
        services,
        run,
        body.stream_mode,
        cancel_on_disconnect=body.on_disconnect == "cancel",
        known=[first_event(run.run_id)],
        followed=followed,
    )


def _stream(
    services: Services,
    run: Run,
    stream_mode: str | list[str] | list[Any] | None,
    *,
    cancel_on_disconnect: bool,
    after: int = 0,
    known: Sequence[JournalEvent] = (),
    followed: Followed | None = None,
) -> EventSourceResponse:
    modes = [stream_mode] if isinstance(stream_mode, str) else stream_mode

    def abandon() -> None:
        services.spawn(_cancel_quietly(services, run))

    batches = journal_frame_batches(
        services.listener,
        run.run_id,
        after=after,
        names=event_names(modes),
        on_abandon=abandon if cancel_on_disconnect else None,
        known=known,
        followed=followed,
    )
    return sse_response(coalesced(batches), _locations(run, "stream"), followed)


async def _wait_response(
    services: Services, run: Run, followed: Followed | None = None
) -> JSONResponse:
    """The thread's values once ``run`` has ended, or ``{"__error__": ...}`` when it failed.

    ``followed``: the run was followed since before its commit (it is closed here).
    """
    error = await _wait_for_end(services, run, followed)
    thread = await threads.get_thread(services.pool, run.thread_id, run.tenant)
    if error is not None:
        body: dict[str, Any] = {"__error__": error}
    elif thread is None:
        body = {}
    else:
        body = values_with_interrupts(await thread_state(services, thread))
    return JSONResponse(jsonable_encoder(body), headers=_locations(run, "join"))


async def _wait_for_end(
    services: Services, run: Run, followed: Followed | None = None
) -> dict[str, Any] | None:
    """Wait for the run's ``end`` event; return its ``error`` event's data, if any.

    A run ``followed`` since before its commit needs no read: every event it has
    is on its way (``followed`` is closed here).
    """
    if followed is None:
        current = await get_run(services.pool, run.run_id)
        if current is None:
            return None  # rolled back: nothing left to wait for
        if current.status in TERMINAL:
            if current.status in ("error", "timeout"):
                return {"error": current.status, "message": current.error or current.status}
            return None
    error: dict[str, Any] | None = None
    events = (
        one_by_one(followed.batches())
        if followed is not None
        else services.listener.subscribe(run.run_id)
    )
    try:
        # The subscription ends after the run's `end` event; closed at once if cut short.
        async with contextlib.aclosing(events):
            async for event in events:
                if event.event == "error":
                    error = (
                        event.data
                        if isinstance(event.data, dict)
                        else {"error": "error", "message": str(event.data)}
                    )
    finally:
        if followed is not None:
            followed.close()  # never read when the wait was cut short before its first batch
    return error


async def _delete_when_done(services: Services, run: Run) -> None:
    await _wait_for_end(services, run)
    await _delete_thread(services, run.thread_id, run.tenant)


async def _delete_thread(services: Services, thread_id: str, tenant: str) -> None:
    """Delete a stateless run's thread (with its checkpoints); a client may have already."""
    with contextlib.suppress(threads.ThreadNotFound):
        await threads.delete_thread(services.pool, thread_id, tenant)


async def _cancel_quietly(services: Services, run: Run) -> None:
    await cancel_run(services.pool, run.thread_id, run.run_id, "interrupt")


async def _thread(services: Services, thread_id: str, tenant: str) -> dict[str, Any]:
    """The tenant's thread the client calls ``thread_id``, or a 404."""
    thread = await threads.get_thread(
        services.pool, threads.stored_thread_id(tenant, thread_id), tenant
    )
    if thread is None:
        raise not_found(f"thread {thread_id}")
    return thread


async def _run(services: Services, thread_id: str, run_id: str, tenant: str) -> Run:
    """The tenant's run on the thread the client calls ``thread_id``, or a 404."""
    stored = threads.stored_thread_id(tenant, thread_id)
    run = await get_run(services.pool, run_id, stored, tenant=tenant)
    if run is None:
        raise not_found(f"run {run_id}", f"run {run_id} not found on thread {thread_id}")
    return run


def _run_response(run: Run, status_code: int = 200) -> JSONResponse:
    return JSONResponse(run.to_api(), status_code=status_code, headers=_locations(run, None))


def _locations(run: Run, tail: str | None) -> dict[str, str]:
    """``Content-Location`` names the run (the SDK reads its ids there); ``Location`` says
    where to rejoin."""
    base = f"/threads/{threads.client_thread_id(run.tenant, run.thread_id)}/runs/{run.run_id}"
    headers = {"Content-Location": base}
    headers["Location"] = f"{base}/{tail}" if tail else base
    return headers


def _seq(last_event_id: str | None) -> int:
    if not last_event_id:
        return 0
    try:
        return max(int(last_event_id), 0)
    except ValueError:
        raise Problem(
            422,
            f"Last-Event-ID must be an event id this server sent (a number), not {last_event_id!r}",
            kind="request-invalid",
        ) from None
