"""The client half of the 2025-11-25 task-augmented request (the ``core`` protocol).

See :mod:`plait.engine.tools.mcp.task_protocol` for the wire. Two things the SDK does
not do for us:

- it checks a ``tools/call`` answer on a 2025-11-25 session against
  ``CallToolResult`` and so refuses the ``CreateTaskResult`` that revision
  defines; :func:`call_as_task` sends the request the way ``send_request``
  does (the session's stamp, its dispatcher) and reads either answer itself;
- a task in ``input_required`` asks its question only while the client waits
  on ``tasks/result``; :func:`wait_core` starts that request then, keeps it
  running (``_FETCHING``) and reports the question the session received
  (:mod:`plait.engine.tools.mcp.task_questions`); :func:`core_result` takes that
  request's answer once the task has ended.

Everything here runs on the hub loop, with the session of one server.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from mcp.client.session import ClientSession
from mcp.shared.dispatcher import CallOptions, ProgressFnT
from mcp_types import (
    CallToolRequest,
    CallToolRequestParams,
    CallToolResult,
    GetTaskPayloadRequest,
    GetTaskPayloadRequestParams,
    GetTaskRequest,
    GetTaskRequestParams,
    GetTaskResult,
    RequestParamsMeta,
    Task,
    TaskMetadata,
)

from plait.engine.tools.mcp.task_protocol import TERMINAL, TaskHandle
from plait.engine.tools.mcp.task_questions import QUESTIONS, Question

#: How long a task may stay ``input_required`` with no question reaching this
#: process (seconds): one asked on a session that is gone (another process's, or
#: before a restart) is never asked again, and the wait would never end.
QUESTION_GRACE_SECONDS = 60.0

#: ``tasks/result`` requests started early (a question travels on them), by task id.
_FETCHING: dict[str, asyncio.Task[CallToolResult]] = {}


async def call_as_task(
    session: ClientSession,
    name: str,
    arguments: dict[str, Any],
    *,
    meta: RequestParamsMeta | None,
    read_timeout: float | None,
    progress: ProgressFnT | None,
    ttl_ms: int | None = None,
) -> CallToolResult | TaskHandle:
    """``tools/call`` with ``params.task``: the task's handle (or a result given at once)."""
    request = CallToolRequest(
        params=CallToolRequestParams(
            name=name, arguments=arguments, task=TaskMetadata(ttl=ttl_ms), _meta=meta
        )
    )
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    opts: CallOptions = {}
    # What send_request does before it sends; its result check is what we skip.
    session._stamp(data, opts)
    if read_timeout is not None:
        opts["timeout"] = read_timeout
    if progress is not None:
        opts["on_progress"] = progress
    raw = await session._dispatcher.send_raw_request("tools/call", data.get("params"), opts)
    if "task" in raw and "content" not in raw:
        task = Task.model_validate(raw["task"], by_name=False)
        return TaskHandle(
            task_id=task.task_id,
            status=task.status,
            status_message=task.status_message,
            created_at=task.created_at,
            last_updated_at=task.last_updated_at,
            ttl_ms=task.ttl,
            poll_interval_ms=task.poll_interval,
        )
    return CallToolResult.model_validate(raw, by_name=False)


async def get_task(session: ClientSession, task_id: str) -> GetTaskResult:
    """``tasks/get`` (2025-11-25: the task alone)."""
    request = GetTaskRequest(params=GetTaskRequestParams(task_id=task_id))
    return await session.send_request(request, GetTaskResult)


async def task_result(session: ClientSession, task_id: str) -> CallToolResult:
    """``tasks/result``: the tool's result (waits for the task to end)."""
    request = GetTaskPayloadRequest(params=GetTaskPayloadRequestParams(task_id=task_id))
    return await session.send_request(request, CallToolResult)


def _fetch_early(session: ClientSession, task_id: str) -> None:
    if task_id not in _FETCHING:
        _FETCHING[task_id] = asyncio.create_task(task_result(session, task_id))


class QuestionLost(RuntimeError):
    """The task waits for input, but its question did not come to this process."""


async def wait_core(
    session: ClientSession,
    task_id: str,
    poll_seconds: float,
    grace: float = QUESTION_GRACE_SECONDS,
) -> str | Question:
    """Poll ``tasks/get`` until the task ends (its status) or asks a question (the question).

    Raises :class:`QuestionLost` when the task stays ``input_required`` for
    ``grace`` seconds without a question reaching this process.
    """
    news = QUESTIONS.news(task_id)
    loop = asyncio.get_running_loop()
    unasked_since: float | None = None
    while True:
        news.clear()  # before looking: news that comes after is not missed
        question = QUESTIONS.pending(task_id)
        if question is not None:
            return question
        task = await get_task(session, task_id)
        if task.status in TERMINAL:
            return task.status
        if task.status != "input_required":
            unasked_since = None
        else:
            _fetch_early(session, task_id)
            unasked_since = unasked_since if unasked_since is not None else loop.time()
            if loop.time() - unasked_since > grace:
                forget_core(task_id)
                raise QuestionLost(
                    f"MCP task {task_id} waits for input, but its question was asked on "
                    "a session of another process or before a restart, and cannot be "
                    "answered here"
                )
        interval = task.poll_interval / 1000 if task.poll_interval else poll_seconds
        # A question or a status notification cuts the wait short.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(news.wait(), interval)


async def core_result(session: ClientSession, task_id: str) -> CallToolResult:
    """The ended task's result: from the ``tasks/result`` already under way, or a new one."""
    fetching = _FETCHING.pop(task_id, None)
    QUESTIONS.forget(task_id)
    if fetching is not None:
        return await fetching
    return await task_result(session, task_id)


def forget_core(task_id: str) -> None:
    """The task was cancelled: stop waiting on its result, cancel an open question."""
    fetching = _FETCHING.pop(task_id, None)
    if fetching is not None:
        fetching.cancel()
    QUESTIONS.forget(task_id)
