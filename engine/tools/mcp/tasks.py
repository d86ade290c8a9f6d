"""Client side of the MCP Tasks extension, and how a run waits for a task.

:class:`TasksClientExtension` plugs the extension into ``mcp.Client`` (the SDK's
``ClientExtension`` API): it advertises ``io.modelcontextprotocol/tasks`` and
claims the ``{"resultType": "task"}`` result, so a plain ``client.call_tool``
of a task tool polls the task to its end. Plait's ``task: true`` tools use the
lower level functions below instead, to record the task and park the run:

1. the call is sent with ``_meta["io.modelcontextprotocol/tasks"]``; the task
   handle that comes back is recorded in Postgres under the call's idempotency
   key (``plait_mcp_tasks``) before anything else happens;
2. in a process whose worker polls tasks (the server, see
   :mod:`plait.engine.tools.mcp.parking` and ``server/workers/mcp_task_poller.py``), a call to an
   ``http`` server raises a LangGraph ``interrupt({"plait": "mcp_task", ...})``:
   the run ends with its thread interrupted and holds no worker; the poller
   resumes the thread with ``command.resume`` once the task has ended;
3. elsewhere (``plait run``, tests, ``stdio`` servers, whose tasks only the
   process that started them can reach) the node polls ``tasks/get`` in place;
4. the re-run of the node finds the recorded task, fetches ``tasks/result``
   and returns the tool's result; a cancelled node cancels the task.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from mcp.client.extension import ClaimContext, ClientExtension, NotificationBinding, ResultClaim
from mcp.client.session import ClientSession
from mcp_types import (
    CallToolResult,
    CancelTaskRequest,
    CancelTaskRequestParams,
    CancelTaskResult,
    GetTaskPayloadRequest,
    GetTaskPayloadRequestParams,
    GetTaskRequest,
    GetTaskRequestParams,
    GetTaskResult,
    TaskStatusNotificationParams,
)

from plait.engine.tools.mcp.task_protocol import TASKS_EXTENSION, TERMINAL, TaskCreated
from plait.engine.tools.mcp.task_questions import QUESTIONS

#: Polling interval when the server suggests none, in seconds.
DEFAULT_POLL_SECONDS = 0.5
#: The ``value`` key that marks Plait's MCP task interrupts (not approvals).
INTERRUPT_MARK = "mcp_task"


def task_meta(ttl_ms: int | None = None) -> dict[str, Any]:
    """The ``_meta`` entry that asks for task execution."""
    return {TASKS_EXTENSION: {} if ttl_ms is None else {"ttl": ttl_ms}}


async def get_task(session: ClientSession, task_id: str) -> GetTaskResult:
    """``tasks/get``."""
    request = GetTaskRequest(params=GetTaskRequestParams(task_id=task_id))
    return await session.send_request(request, GetTaskResult)


async def task_result(session: ClientSession, task_id: str) -> CallToolResult:
    """``tasks/result``: the tool's result (waits for the task to end)."""
    request = GetTaskPayloadRequest(params=GetTaskPayloadRequestParams(task_id=task_id))
    return await session.send_request(request, CallToolResult)


async def cancel_task(session: ClientSession, task_id: str) -> CancelTaskResult:
    """``tasks/cancel``."""
    request = CancelTaskRequest(params=CancelTaskRequestParams(task_id=task_id))
    return await session.send_request(request, CancelTaskResult)


async def wait_for_task(session: ClientSession, task_id: str, poll_seconds: float) -> str:
    """Poll ``tasks/get`` until the task ends; return its final status.

    A status notification from the server cuts a poll interval short.
    """
    news = QUESTIONS.news(task_id)
    try:
        while True:
            news.clear()
            task = await get_task(session, task_id)
            if task.status in TERMINAL:
                return task.status
            interval = task.poll_interval / 1000 if task.poll_interval else poll_seconds
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(news.wait(), interval)
    finally:
        QUESTIONS.forget(task_id)


async def _resolve(created: TaskCreated, ctx: ClaimContext) -> CallToolResult:
    # A plain call_tool of a task tool: wait in place, then fetch the result.
    await wait_for_task(ctx.session, created.task.task_id, DEFAULT_POLL_SECONDS)
    return await task_result(ctx.session, created.task.task_id)


class TasksClientExtension(ClientExtension):
    """``io.modelcontextprotocol/tasks`` for ``mcp.Client(extensions=[...])``.

    It also observes ``notifications/tasks/status`` (either protocol), which
    wakes a task's poller early.
    """

    identifier = TASKS_EXTENSION

    def claims(self) -> Sequence[ResultClaim[Any]]:
        """The task handle a ``tools/call`` may answer with."""
        return (ResultClaim(result_type="task", model=TaskCreated, resolve=_resolve),)

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        """Status changes a server announces (``notifications/tasks/status``)."""
        return (
            NotificationBinding(
                method="notifications/tasks/status",
                params_type=TaskStatusNotificationParams,
                handler=QUESTIONS.on_status,
            ),
        )
