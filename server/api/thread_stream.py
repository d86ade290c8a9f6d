"""The thread streaming protocol of ``@langchain/langgraph-sdk`` 1.15 (``client.threads.stream``).

Two routes, as the SDK's SSE transport (``client/stream/transport/http.js``)
calls them:

- ``POST /threads/{thread_id}/commands``: one command ``{id, method, params}``,
  answered ``{type: "success", id, result}``. Plait serves ``run.start``
  (a new run, created with its thread if needed; on an interrupted thread its
  ``input`` resumes the interrupt), ``input.respond`` (resume interrupts by
  id) and ``state.get`` (root namespace). Other methods are refused (422
  ``not_supported`` / ``unknown_command``). A refusal is a problem whose
  ``message`` and ``error`` (the protocol's error code) the SDK shows.
- ``POST /threads/{thread_id}/stream/events``: SSE of the thread's events as
  protocol events (:mod:`plait.server.http.thread_protocol`), filtered by ``channels``,
  ``namespaces`` and ``depth``. It starts at the thread's active run (else its
  latest), or after ``since``, and follows the thread's runs one after the
  other until the client closes it; a thread with no run yet waits for one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Iterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sse_starlette import EventSourceResponse, ServerSentEvent

from plait.engine.run import RunRejected, ThreadSpecMismatch
from plait.engine.store import Pool
from plait.server.api.checkpoints import thread_state
from plait.server.api.deps import Services, Svc
from plait.server.api.runs import RunCommand, RunCreate, _create
from plait.server.auth.keys import Tenant
from plait.server.http.problems import Problem
from plait.server.http.sse import coalesced, encode, sse_response
from plait.server.http.thread_protocol import RUN_SPAN, EventFilter, RunTranslator
from plait.server.operations.metrics import SSE_STREAMS
from plait.server.queue import threads
from plait.server.queue.journal import NewRuns
from plait.server.queue.runs import ThreadBusy, current_run_of_thread, get_run, next_run_of_thread
from plait.server.queue.threads import ThreadNotFound

router = APIRouter(tags=["thread streams"])

#: What runs started by ``run.start`` and ``input.respond`` journal: what the protocol's
#: ``values``, ``updates``, ``messages``, ``custom``, ``lifecycle`` and ``input`` carry.
THREAD_STREAM_MODES = ["values", "updates", "messages-tuple", "custom"]
#: How long a stream opened on an interrupted thread waits for the resume run (see
#: ``_starting_run``).
RESPOND_GRACE_SECONDS = 3.0


class ProtocolCommand(BaseModel):
    """A command of the thread protocol."""

    model_config = ConfigDict(extra="allow")

    id: int = Field(ge=0)
    method: str
    params: dict[str, Any] = Field(default_factory=dict)


class EventStreamRequest(BaseModel):
    """The filter of one event stream (``EventStreamRequest`` of ``@langchain/protocol``)."""

    model_config = ConfigDict(extra="allow")

    channels: list[str]
    namespaces: list[list[str]] | None = None
    depth: int | None = Field(None, ge=0)
    since: int | None = Field(None, ge=0)


@router.post("/threads/{thread_id}/commands", summary="Send a thread protocol command")
async def command(
    thread_id: str,
    body: ProtocolCommand,
    request: Request,
    services: Svc,
    tenant: Tenant,
) -> JSONResponse:
    """``run.start``, ``input.respond`` or ``state.get``; ``{type: "success", id, result}``."""
    with _protocol_errors(body.id):
        threads.check_client_thread_id(thread_id)
        if body.method == "run.start":
            result = await _run_start(services, request, tenant, thread_id, body.params)
        elif body.method == "input.respond":
            result = await _input_respond(services, request, tenant, thread_id, body.params)
        elif body.method == "state.get":
            result = await _state_get(services, tenant, thread_id, body.params)
        elif body.method in _UNSUPPORTED:
            raise _refusal(422, "not_supported", f"{body.method} is not supported by Plait")
        else:
            raise _refusal(422, "unknown_command", f"unknown command {body.method!r}")
    return JSONResponse({"type": "success", "id": body.id, "result": result})


@router.post(
    "/threads/{thread_id}/stream/events",
    summary="Stream a thread's events (thread protocol, SSE)",
    response_class=EventSourceResponse,
)
async def stream_events(
    thread_id: str, body: EventStreamRequest, services: Svc, tenant: Tenant
) -> EventSourceResponse:
    """The thread's protocol events matching the filter, from its current run or ``since``."""
    stored = threads.stored_thread_id(tenant, thread_id)
    thread = await threads.get_thread(services.pool, stored, tenant)
    if thread is None:
        raise _refusal(404, "no_such_run", f"thread {thread_id} not found")
    wanted = EventFilter(
        channels=frozenset(body.channels),
        namespaces=None
        if body.namespaces is None
        else tuple(tuple(namespace) for namespace in body.namespaces),
        depth=body.depth,
    )
    interrupted = thread.get("status") == "interrupted"
    frames = _thread_frames(services, stored, wanted, body.since, interrupted=interrupted)
    return sse_response(coalesced(frames), {})


#: Methods of the protocol Plait does not serve (yet).
_UNSUPPORTED = frozenset(
    {
        "input.inject",
        "agent.getTree",
        "state.listCheckpoints",
        "state.fork",
        "subscription.subscribe",
        "subscription.unsubscribe",
        "subscription.reconnect",
    }
)


# ----------------------------------------------------------------------- commands


async def _run_start(
    services: Services, request: Request, tenant: str, thread_id: str, params: dict[str, Any]
) -> dict[str, Any]:
    """Start a run on the thread (created if needed); on an interrupted thread, resume it."""
    if not isinstance(params.get("assistant_id"), str):
        raise _refusal(422, "invalid_argument", "run.start needs params.assistant_id")
    stored = threads.stored_thread_id(tenant, thread_id)
    thread = await threads.get_thread(services.pool, stored, tenant)
    resume = thread is not None and thread.get("status") == "interrupted"
    fields: dict[str, Any] = {
        "assistant_id": params["assistant_id"],
        "input": None if resume else params.get("input"),
        "command": RunCommand(resume=params.get("input")) if resume else None,
        "multitask_strategy": params.get("multitask_strategy") or "enqueue",
    }
    run_id = await _start(services, request, tenant, thread_id, params, fields)
    return {"run_id": run_id}


async def _input_respond(
    services: Services, request: Request, tenant: str, thread_id: str, params: dict[str, Any]
) -> dict[str, Any]:
    """Resume the thread's pending interrupts named by id with their responses."""
    entries = params.get("responses") if "responses" in params else [params]
    if not isinstance(entries, list) or not entries:
        raise _refusal(422, "invalid_argument", "input.respond needs interrupt_id and response")
    answers: dict[str, Any] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("interrupt_id"), str):
            raise _refusal(422, "invalid_argument", "each response needs an interrupt_id")
        answers[entry["interrupt_id"]] = entry.get("response")
    thread = await _thread(services, tenant, thread_id)
    state = await thread_state(services, thread)
    pending = {str(item.get("id")) for item in state["interrupts"]}
    unknown = sorted(set(answers) - pending)
    if unknown:
        waiting = ", ".join(sorted(pending)) or "none"
        raise _refusal(
            404,
            "no_such_interrupt",
            f"thread {thread_id} has no pending interrupt {', '.join(unknown)} "
            f"(pending: {waiting})",
        )
    fields: dict[str, Any] = {
        "assistant_id": f"{thread['graph']}@{thread['version']}",
        "command": RunCommand(resume=answers, update=params.get("update"), goto=params.get("goto")),
    }
    run_id = await _start(services, request, tenant, thread_id, params, fields)
    return {"run_id": run_id}


async def _state_get(
    services: Services, tenant: str, thread_id: str, params: dict[str, Any]
) -> dict[str, Any]:
    """The thread's values (only ``keys`` when given) and checkpoint."""
    if params.get("namespace"):
        raise _refusal(422, "not_supported", "state.get serves the root namespace ([]) only")
    state = await thread_state(services, await _thread(services, tenant, thread_id))
    values = state["values"] if isinstance(state["values"], dict) else {}
    keys = params.get("keys")
    if isinstance(keys, list):
        values = {key: value for key, value in values.items() if key in keys}
    result: dict[str, Any] = {"values": values}
    checkpoint = state.get("checkpoint") or {}
    if checkpoint.get("checkpoint_id"):
        result["checkpoint"] = {
            "id": checkpoint["checkpoint_id"],
            "ns": checkpoint.get("checkpoint_ns") or "",
        }
    return result


async def _start(
    services: Services,
    request: Request,
    tenant: str,
    thread_id: str,
    params: dict[str, Any],
    fields: dict[str, Any],
) -> str:
    """Create the run as ``POST /threads/{id}/runs`` would, streaming what the protocol needs."""
    try:
        body = RunCreate(
            **fields,
            config=params.get("config"),
            metadata=params.get("metadata"),
            stream_mode=THREAD_STREAM_MODES,  # type: ignore[arg-type]
            stream_subgraphs=True,
            stream_resumable=True,
            if_not_exists="create",
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise _refusal(422, "invalid_argument", f"params.{where}: {first.get('msg')}") from None
    run, _ = await _create(services, request, body, thread_id, None, tenant)
    return run.run_id


async def _thread(services: Services, tenant: str, thread_id: str) -> dict[str, Any]:
    thread = await threads.get_thread(
        services.pool, threads.stored_thread_id(tenant, thread_id), tenant
    )
    if thread is None:
        raise _refusal(404, "no_such_run", f"thread {thread_id} not found")
    return thread


def _refusal(status: int, code: str, message: str) -> Problem:
    """A problem the SDK shows: it reads ``message`` (and ``error``, the protocol's code)."""
    kinds = {404: ("not-found", "Not found"), 409: ("conflict", "Conflict")}
    kind, title = kinds.get(status, ("request-invalid", "Invalid request"))
    return Problem(status, message, kind=kind, title=title, error=code, message=message)


@contextlib.contextmanager
def _protocol_errors(command_id: int) -> Iterator[None]:
    """A command's refusals as problems with ``message``, ``error`` and the command's ``id``."""
    try:
        yield
    except Problem as problem:
        code = {404: "no_such_run", 409: "invalid_argument"}.get(problem.status, "invalid_argument")
        problem.extra = {
            "error": code,
            "message": problem.detail,
            **problem.extra,
            "id": command_id,
        }
        raise
    except (ThreadBusy, ThreadSpecMismatch) as exc:
        raise _with_id(_refusal(409, "invalid_argument", str(exc)), command_id) from None
    except RunRejected as exc:
        raise _with_id(_refusal(422, "invalid_argument", str(exc)), command_id) from None
    except ThreadNotFound as exc:
        raise _with_id(_refusal(404, "no_such_run", str(exc)), command_id) from None


def _with_id(problem: Problem, command_id: int) -> Problem:
    problem.extra["id"] = command_id
    return problem


# ----------------------------------------------------------------------- events


async def _thread_frames(
    services: Services,
    thread_id: str,
    wanted: EventFilter,
    since: int | None,
    *,
    interrupted: bool,
) -> AsyncGenerator[list[ServerSentEvent], None]:
    """The thread's protocol events as SSE frames, a batch at a time, run after run.

    ``interrupted``: the thread waits on an interrupt (see :func:`_starting_run`).
    """
    pool = services.pool
    SSE_STREAMS.inc()
    # Entered before the thread's runs are read: a run created meanwhile is not missed.
    with services.listener.new_runs(thread_id) as new_runs:
        try:
            if since is None:
                run, after = await _starting_run(pool, thread_id, interrupted, new_runs), 0
            else:
                since_queue, since_seq = divmod(since, RUN_SPAN)
                run = await next_run_of_thread(pool, thread_id, since_queue - 1)
                after = since_seq if run is not None and run[1] == since_queue else 0
            last_queue = since // RUN_SPAN if since is not None else 0
            while True:
                while run is None:
                    await new_runs.wait()
                    run = await next_run_of_thread(pool, thread_id, last_queue)
                frames = _run_frames(services, run, wanted, after)
                async with contextlib.aclosing(frames) as batches:
                    async for batch in batches:
                        yield batch
                last_queue, after = run[1], 0
                run = await next_run_of_thread(pool, thread_id, last_queue)
        finally:
            SSE_STREAMS.dec()


async def _run_frames(
    services: Services, run: tuple[str, int, str], wanted: EventFilter, after: int
) -> AsyncGenerator[list[ServerSentEvent], None]:
    """One run's protocol events after its journal seq ``after``, until its end.

    The journal is read from its start: what came before ``after`` (an
    interrupt, a message in progress) shapes the events that follow.
    """
    run_id, queue_id, graph = run
    translator = RunTranslator(queue_id, graph)
    async with contextlib.aclosing(services.listener.subscribe_batches(run_id, 0)) as batches:
        async for events in batches:
            frames: list[ServerSentEvent] = []
            for event in events:
                status = None
                if event.event == "end":
                    ended = await get_run(services.pool, run_id)
                    status = ended.status if ended is not None else None
                for translated in translator.translate(event, status):
                    if event.seq > after and wanted.matches(
                        translated.method, translated.namespace
                    ):
                        frames.append(
                            ServerSentEvent(
                                data=encode(translated.to_json()), id=translated.event_id
                            )
                        )
            if frames:
                yield frames


async def _starting_run(
    pool: Pool, thread_id: str, interrupted: bool, new_runs: NewRuns
) -> tuple[str, int, str] | None:
    """Where a stream without ``since`` starts: the thread's current run.

    The SDK's ``input.respond`` opens its stream while it sends the command,
    so the stream may come first: on an interrupted thread with no run to
    finish, the resume run is awaited a moment (``RESPOND_GRACE_SECONDS``)
    before the interrupted run is replayed (a client loading the thread).
    """
    run = await current_run_of_thread(pool, thread_id)
    if run is None or not interrupted or run[3] in ("pending", "running"):
        return run[:3] if run else None
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(RESPOND_GRACE_SECONDS):
            while True:
                await new_runs.wait()
                resumed = await next_run_of_thread(pool, thread_id, run[1])
                if resumed is not None:
                    return resumed
    return run[:3]
