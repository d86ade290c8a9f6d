"""``kind: mcp`` tools: a LangChain tool that calls one tool of an MCP server.

The tool is what :func:`plait.engine.tools.gateway.call_tool` invokes, so everything
the gateway does (allowlist, risk, retries by error class, breaker, the
idempotency record, audit, events) applies. The call itself:

1. checks the arguments against the tool's input schema (``jsonschema``) and
   refuses a mismatch before anything is sent;
2. sends the gateway's idempotency key as ``_meta["plait.dev/idempotency-key"]``
   so the server can deduplicate too;
3. applies the tool's ``timeout``;
4. forwards progress notifications as custom stream events
   ``{"plait": "tool_progress", "node", "tool", "progress", "total", "message"}``;
5. turns an ``is_error`` result into :class:`plait.engine.errors.ToolReportedError`;
6. stores a large result by reference (:mod:`plait.engine.tools.mcp.results`);
7. with ``task: true``, or for a tool its server says must run as a task,
   runs the call as an MCP task in the protocol the server announced
   (:mod:`plait.engine.tools.mcp.task_protocol`); a task's question
   (``input_required``) becomes an approval (:mod:`plait.engine.tools.mcp.task_questions`).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import interrupt
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT
from mcp_types import CallToolResult, ElicitResult, RequestParamsMeta, Tool

from plait.engine.governance.audit import run_id_of
from plait.engine.governance.current_call import ToolCall, current_call
from plait.engine.governance.secrets import current_source
from plait.engine.observability.emit import emit
from plait.engine.spec.models import McpServerDef, ToolDef, duration_seconds
from plait.engine.store import mcp_tasks
from plait.engine.store.pool import Pool
from plait.engine.tools.idempotency import store_from
from plait.engine.tools.mcp.core_tasks import call_as_task, core_result, forget_core, wait_core
from plait.engine.tools.mcp.hub import HUB, Credentials, ServerConnection, credentials_of, on_hub
from plait.engine.tools.mcp.parking import parking_enabled
from plait.engine.tools.mcp.results import by_reference, raise_for_error, result_value
from plait.engine.tools.mcp.schema_check import check_arguments
from plait.engine.tools.mcp.task_protocol import (
    TERMINAL,
    TaskHandle,
    TaskProtocol,
    TaskState,
    TaskSupport,
    protocol_of,
)
from plait.engine.tools.mcp.task_questions import (
    QUESTIONS,
    Question,
    approval_payload,
    asked_in_task,
    elicit_result,
)
from plait.engine.tools.mcp.tasks import (
    DEFAULT_POLL_SECONDS,
    INTERRUPT_MARK,
    cancel_task,
    get_task,
    result_of,
    task_meta,
    update_task,
    wait_for_task,
)
from plait.engine.tools.run_values import current_values

log = logging.getLogger(__name__)

#: The ``_meta`` key of a call's idempotency key.
IDEMPOTENCY_META = "plait.dev/idempotency-key"


@dataclass(frozen=True)
class McpCall:
    """One spec tool bound to one server tool."""

    name: str
    server: ServerConnection
    remote: str
    schema: dict[str, Any]
    timeout: float | None
    task: bool
    #: The task protocol the server announced (used when ``task``).
    protocol: TaskProtocol = "extension"

    @property
    def inline_limit(self) -> int:
        """Results larger than this (JSON bytes) are stored by reference."""
        return self.server.definition.inline_limit


def pool_of(call: ToolCall | None) -> Pool | None:
    """The run's Postgres pool, when its tool results are recorded in Postgres."""
    if call is None:
        return None
    pool: Pool | None = getattr(store_from(call.config), "pool", None)
    return pool


def _progress_forwarder(call: McpCall, node: str | None) -> ProgressFnT:
    """A progress callback for the hub loop that emits on the caller's loop and context."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()

    def announce(progress: float, total: float | None, message: str | None) -> None:
        emit(
            {
                "plait": "tool_progress",
                "node": node,
                "tool": call.name,
                "progress": progress,
                "total": total,
                "message": message,
            }
        )

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        loop.call_soon_threadsafe(announce, progress, total, message, context=context)

    return on_progress


async def _send(
    call: McpCall,
    creds: Credentials,
    args: dict[str, Any],
    meta: dict[str, Any],
    progress: ProgressFnT,
) -> CallToolResult | TaskHandle:
    """``tools/call`` on the hub (a lost session is dropped there, see :func:`on_hub`)."""

    async def work(client: Client, tools: dict[str, Tool]) -> CallToolResult | TaskHandle:
        if call.task and call.protocol == "core":
            return await call_as_task(
                client.session,
                call.remote,
                args,
                meta=cast(RequestParamsMeta, meta),
                read_timeout=call.timeout,
                progress=progress,
            )
        if call.task:
            answer = await client.session.call_tool(
                call.remote,
                args,
                read_timeout_seconds=call.timeout,
                progress_callback=progress,
                meta=cast(RequestParamsMeta, meta),
                allow_claimed=True,
            )
            if not isinstance(answer, CallToolResult | TaskHandle):
                raise TypeError(f"unexpected result {type(answer).__name__} of a task call")
            return answer
        return await client.call_tool(
            call.remote,
            args,
            read_timeout_seconds=call.timeout,
            progress_callback=progress,
            meta=cast(RequestParamsMeta, meta),
        )

    return await on_hub(call.server, creds, work)


async def call_mcp(call: McpCall, args: dict[str, Any]) -> Any:
    """Call the server's tool once (see the module docstring); return the JSON-like value."""
    check_arguments(call.name, call.schema, args)
    server = call.server.for_run(current_values())
    if server is not call.server:  # per-run args/env: the session of this run's values
        call = replace(call, server=server)
    # The run's own secrets, resolved at each call (a rotated one reconnects).
    creds = await credentials_of(call.server, current_source())
    gateway_call = current_call()
    meta: dict[str, Any] = {}
    if gateway_call is not None and gateway_call.key is not None:
        meta[IDEMPOTENCY_META] = gateway_call.key
    node = gateway_call.node if gateway_call is not None else None
    progress = _progress_forwarder(call, node)
    result: CallToolResult | TaskHandle
    if call.task:
        result = await _run_task(call, creds, args, meta, progress, gateway_call)
    elif call.timeout is None:
        result = await _send(call, creds, args, meta, progress)
    else:
        try:
            result = await asyncio.wait_for(_send(call, creds, args, meta, progress), call.timeout)
        except TimeoutError:
            raise TimeoutError(
                f"MCP tool {call.name!r} timed out after {call.timeout:g}s"
            ) from None
    # Without task _meta the Tasks client resolves a task answer itself (tasks.py).
    assert isinstance(result, CallToolResult)
    raise_for_error(call.name, result)
    return await by_reference(pool_of(gateway_call), result_value(result), call.inline_limit)


async def _run_task(
    call: McpCall,
    creds: Credentials,
    args: dict[str, Any],
    meta: dict[str, Any],
    progress: ProgressFnT,
    gateway_call: ToolCall | None,
) -> CallToolResult:
    """Start (or find) the call's task, wait for it (parked or in place), return its result."""
    pool = pool_of(gateway_call)
    # Recorded only where a re-run can find it again: a Postgres store and a key.
    key = gateway_call.key if gateway_call is not None and pool is not None else None
    record = await mcp_tasks.get_task(pool, key) if pool is not None and key else None
    if record is None:
        # The extension asks in _meta; the core protocol's params.task is added by _send.
        asked = meta if call.protocol == "core" else {**meta, **task_meta()}
        answer = await _send(call, creds, args, asked, progress)
        if isinstance(answer, CallToolResult):
            return answer  # the server ran it at once (it does not do tasks)
        record = _record_of(call, answer, gateway_call, key)
        if pool is not None and key is not None:
            # Recorded before the run parks or waits: a re-run finds this task.
            record = await asyncio.shield(mcp_tasks.record_task(pool, record))
    emit({"plait": "mcp_task", "node": record.node, "tool": call.name, "task_id": record.task_id})
    try:
        # A stdio server is a child of this process: its tasks are unknown to the
        # server process another worker (the poller, the resumed run) would talk to.
        # A core task's question comes on this process's session (while it waits
        # on tasks/result) and must be answered there: it waits here too.
        can_park = (
            key is not None
            and gateway_call is not None
            and parking_enabled(gateway_call.config)
            and call.server.definition.transport == "http"
            and call.protocol == "extension"
        )
        result: CallToolResult
        if call.protocol == "core":
            status = await _wait_answering(call, creds, record)
            result = await on_hub(
                call.server, creds, lambda client, _: core_result(client.session, record.task_id)
            )
        else:
            task = await _follow(call, creds, record, pool=pool, can_park=can_park)
            status, result = task.status, result_of(task)
    except asyncio.CancelledError:
        # The run was cancelled while it waited in place: the task goes too.
        await asyncio.shield(_cancel(call, creds, record, pool))
        raise
    if pool is not None and key is not None:
        if result.is_error:
            # Only successes are kept (as in the gateway): a retry starts a new task.
            await mcp_tasks.forget_task(pool, key)
        else:
            await mcp_tasks.set_status(pool, key, status)
    return result


def _record_of(
    call: McpCall, answer: TaskHandle, gateway_call: ToolCall | None, key: str | None
) -> mcp_tasks.TaskRecord:
    config = gateway_call.config if gateway_call is not None else {}
    return mcp_tasks.TaskRecord(
        key=key or answer.task_id,
        thread_id=str((config.get("configurable") or {}).get("thread_id")),
        run_id=run_id_of(config),
        node=gateway_call.node if gateway_call is not None else call.name,
        server_name=call.server.name,
        server=call.server.to_json(),
        tool=call.remote,
        task_id=answer.task_id,
        status=answer.status,
    )


async def _follow(
    call: McpCall,
    creds: Credentials,
    record: mcp_tasks.TaskRecord,
    *,
    pool: Pool | None,
    can_park: bool,
) -> TaskState:
    """Follow a 2026-07-28 task to its end: park while it runs (where a poller resumes
    the run), and turn each of its questions into an approval answered with ``tasks/update``.

    Every interrupt the call raises is recorded first (``record.interrupts``)
    and raised again, in that order, by a re-run of the node: LangGraph hands
    interrupts their resume values by position, so each question gets its own
    decision back even with parks in between. Questions need that record
    (a run on Postgres).
    """
    decisions: dict[str, Any] = {}  # a question's id -> its decision
    for entry in record.interrupts:
        value = interrupt(_interrupt_value(record, entry, len(decisions) + 1))
        if entry["kind"] == "question":
            decisions[entry["id"]] = value
    sent: set[str] = set()

    async def raise_next(entry: dict[str, Any]) -> Any:
        if pool is not None:
            await asyncio.shield(mcp_tasks.add_interrupt(pool, record.key, entry))
        # The first time, this ends the run; the re-run gets the resume value back.
        return interrupt(_interrupt_value(record, entry, len(decisions) + 1))

    while True:
        task = await on_hub(
            call.server,
            creds,
            lambda client, _: (
                get_task(client.session, record.task_id)
                if can_park
                else wait_for_task(client.session, record.task_id, DEFAULT_POLL_SECONDS)
            ),
        )
        if task.status in TERMINAL:
            return task
        if task.status != "input_required":
            await raise_next({"kind": "park"})  # only where it can park: else it waited above
            continue
        answers: dict[str, ElicitResult] = {}
        for ident, request in (task.input_requests or {}).items():
            # A question is its key: a server names a new question with a new key.
            asked = asked_in_task(record.task_id, len(decisions) + 1, request)
            if ident not in decisions:
                if pool is None:
                    raise RuntimeError(
                        f"MCP task {record.task_id} of {call.name!r} asks for input; a person "
                        "can answer it only in a run recorded in Postgres"
                    )
                entry = {"kind": "question", "id": ident, "request": request}
                decisions[ident] = await raise_next(entry)
            if ident not in sent:
                answers[ident] = elicit_result(decisions[ident], asked)
                sent.add(ident)
        if answers:
            await _send_answers(call, creds, record.task_id, answers)
        else:  # answered: the server has not taken it up yet
            await asyncio.sleep((task.poll_interval_ms or 0) / 1000 or DEFAULT_POLL_SECONDS)


async def _send_answers(
    call: McpCall, creds: Credentials, task_id: str, answers: dict[str, ElicitResult]
) -> None:
    async def work(client: Client, tools: dict[str, Tool]) -> None:
        await update_task(client.session, task_id, answers)

    await on_hub(call.server, creds, work)


def _interrupt_value(
    record: mcp_tasks.TaskRecord, entry: Mapping[str, Any], number: int
) -> dict[str, Any]:
    """What an interrupt of a task call says: a park for the poller, or question ``number``."""
    if entry["kind"] == "park":
        return {
            "plait": INTERRUPT_MARK,
            "key": record.key,
            "node": record.node,
            "server": record.server_name,
            "tool": record.tool,
            "task_id": record.task_id,
        }
    asked = asked_in_task(record.task_id, number, entry["request"])
    return approval_payload(record.node, record.server_name, record.tool, asked)


async def _wait_answering(call: McpCall, creds: Credentials, record: mcp_tasks.TaskRecord) -> str:
    """Wait in place for a core task; each question it asks becomes an approval.

    The approval's ``interrupt`` ends the run while the question stays open on
    this process's session; the re-run that carries the decision answers it
    and waits on. On a re-run the decisions of earlier questions come back
    first, in order (LangGraph replays a node's interrupts by position), and
    only the open question's is sent.
    """
    asked = 0
    while True:
        outcome = await on_hub(
            call.server,
            creds,
            lambda client, _: wait_core(client.session, record.task_id, DEFAULT_POLL_SECONDS),
        )
        if isinstance(outcome, str):
            return outcome
        asked += 1
        decision = interrupt(
            approval_payload(record.node, record.server_name, record.tool, outcome)
        )
        if outcome.number != asked:
            continue  # an earlier question's decision, already sent
        answer = elicit_result(decision, outcome)
        if not await HUB.call(_answer(outcome, answer)):
            raise RuntimeError(
                f"MCP task {record.task_id} of {call.name!r}: its question is no longer open"
            )


async def _answer(question: Question, answer: ElicitResult) -> bool:
    # On the hub loop, where the question's future lives.
    return QUESTIONS.answer(question, answer)


async def _cancel(
    call: McpCall, creds: Credentials, record: mcp_tasks.TaskRecord, pool: Pool | None
) -> None:
    try:
        if call.protocol == "core":
            await HUB.call(_forget(record.task_id))
        await on_hub(
            call.server, creds, lambda client, _: cancel_task(client.session, record.task_id)
        )
        if pool is not None:
            await mcp_tasks.set_status(pool, record.key, "cancelled")
    except Exception:
        # The run is cancelled either way; a server that cannot be told is logged.
        log.exception("MCP task %s of %s: cancel failed", record.task_id, call.server.name)


async def _forget(task_id: str) -> None:
    forget_core(task_id)


async def _describe(
    server: ServerConnection, creds: Credentials, remote: str
) -> tuple[Tool, TaskProtocol]:
    async def work(client: Client, tools: dict[str, Tool]) -> tuple[Tool, TaskProtocol]:
        found = tools.get(remote)
        if found is None:
            listing = await client.list_tools()
            tools.update({tool.name: tool for tool in listing.tools})
            found = tools.get(remote)
        if found is None:
            names = ", ".join(sorted(tools))
            raise LookupError(
                f"MCP server {server.name!r} has no tool {remote!r} (it has: {names})"
            )
        return found, protocol_of(client.server_capabilities)

    return await on_hub(server, creds, work)


def runs_as_task(name: str, wanted: bool, listed: Tool, protocol: TaskProtocol) -> bool:
    """Whether calls of tool ``name`` run as tasks: the spec's ``task``, unless its server says.

    A core server's ``execution.taskSupport`` decides where it is firm:
    ``required`` always runs as a task, ``forbidden`` (the default) refuses a
    spec that asks for one. The extension has no per-tool word.
    """
    if protocol != "core":
        return wanted
    support: TaskSupport = (
        listed.execution.task_support
        if listed.execution is not None and listed.execution.task_support is not None
        else "forbidden"
    )
    if support == "required":
        return True
    if wanted and support == "forbidden":
        raise ValueError(
            f"tool {name!r} has task: true, but its server's tool {listed.name!r} "
            "does not run as a task (execution.taskSupport is forbidden); remove task: true"
        )
    return wanted


def mcp_connection(
    tool_def: ToolDef, servers: Mapping[str, McpServerDef], base_dir: Path
) -> ServerConnection:
    """The server ``tool_def`` (``kind: mcp``) calls."""
    assert tool_def.server is not None
    return ServerConnection(tool_def.server, servers[tool_def.server], Path(base_dir).resolve())


def load_mcp_tool(
    name: str,
    tool_def: ToolDef,
    servers: Mapping[str, McpServerDef],
    base_dir: Path,
    creds: Credentials,
) -> BaseTool:
    """The LangChain tool for ``tool_def`` (``kind: mcp``), with the server's schema.

    Connects to the server on first use in this process (the session stays open)
    to read the tool's description and input schema, with ``creds`` (the
    loading run's secrets of the server); each call resolves its own run's.
    """
    server = mcp_connection(tool_def, servers, base_dir)
    remote = tool_def.tool or name
    listed, protocol = HUB.call_sync(
        # Per-run args/env: described by the loading run's session; each call uses its own.
        _describe(server.for_run(current_values()), creds, remote),
        timeout=duration_seconds(server.definition.connect_timeout) + 5,
    )
    call = McpCall(
        name=name,
        server=server,
        remote=remote,
        schema=dict(listed.input_schema),
        timeout=duration_seconds(tool_def.timeout) if tool_def.timeout is not None else None,
        task=runs_as_task(name, tool_def.task, listed, protocol),
        protocol=protocol,
    )

    async def invoke(**kwargs: Any) -> Any:
        return await call_mcp(call, kwargs)

    return StructuredTool.from_function(
        coroutine=invoke,
        name=name,
        description=tool_def.description or listed.description or f"Calls {remote}.",
        args_schema=call.schema,
        infer_schema=False,
    )
