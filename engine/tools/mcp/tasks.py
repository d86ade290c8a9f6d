"""Client side of the MCP Tasks extension (2026-07-28), and how a run waits for a task.

:class:`TasksClientExtension` plugs the extension into ``mcp.Client`` (the SDK's
``ClientExtension`` API): it declares ``io.modelcontextprotocol/tasks`` and
claims the ``{"resultType": "task"}`` answer, so a plain ``client.call_tool``
of a task tool polls the task to its end. Plait's ``task: true`` tools use the
lower level functions below instead, to record the task and park the run:

1. the call is sent with ``_meta["io.modelcontextprotocol/tasks"]``; the task
   handle that comes back is recorded in Postgres under the call's idempotency
   key (``plait_mcp_tasks``) before anything else happens;
2. in a process whose worker polls tasks (the server, see
   :mod:`plait.engine.tools.mcp.parking` and ``server/workers/mcp_task_poller.py``), a call to an
   ``http`` server raises a LangGraph ``interrupt({"plait": "mcp_task", ...})``:
   the run ends with its thread interrupted and holds no worker; the poller
   resumes the thread with ``command.resume`` once the task has ended or asks
   for input;
3. elsewhere (``plait run``, tests, ``stdio`` servers, whose tasks only the
   process that started them can reach) the node polls ``tasks/get`` in place;
4. a task in ``input_required`` asks its questions in ``tasks/get``; each
   becomes a Plait approval, and the decision goes back with ``tasks/update``
   (:mod:`plait.engine.tools.mcp.tool`);
5. the re-run of the node finds the recorded task, and ``tasks/get`` gives the
   tool's result once it has ended; a cancelled node cancels the task.
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
    ElicitResult,
    GetTaskRequest,
    GetTaskRequestParams,
    Result,
    TaskStatusNotificationParams,
    TextContent,
)

from plait.engine.tools.mcp.task_protocol import (
    TASKS_EXTENSION,
    TERMINAL,
    TaskHandle,
    TaskState,
    UpdateTaskParams,
    UpdateTaskRequest,
)
from plait.engine.tools.mcp.task_questions import QUESTIONS

#: Polling interval when the server suggests none, in seconds.
DEFAULT_POLL_SECONDS = 0.5
#: The ``value`` key that marks Plait's MCP task interrupts (not approvals).
INTERRUPT_MARK = "mcp_task"


def task_meta(ttl_ms: int | None = None) -> dict[str, Any]:
    """The ``_meta`` entry that asks for task execution."""
    return {TASKS_EXTENSION: {} if ttl_ms is None else {"ttl": ttl_ms}}


async def get_task(session: ClientSession, task_id: str) -> TaskState:
    """``tasks/get``: the task, with its result, error or questions."""
    request = GetTaskRequest(params=GetTaskRequestParams(task_id=task_id))
    return await session.send_request(request, TaskState)


async def update_task(
    session: ClientSession, task_id: str, answers: dict[str, ElicitResult]
) -> None:
    """``tasks/update``: answer the task's questions (``inputRequests``) by key."""
    responses = {
        key: answer.model_dump(by_alias=True, mode="json", exclude_none=True)
        for key, answer in answers.items()
    }
    request = UpdateTaskRequest(params=UpdateTaskParams(task_id=task_id, input_responses=responses))
    await session.send_request(request, Result)


async def cancel_task(session: ClientSession, task_id: str) -> None:
    """``tasks/cancel`` (either protocol; the answer says nothing Plait needs)."""
    request = CancelTaskRequest(params=CancelTaskRequestParams(task_id=task_id))
    await session.send_request(request, Result)


async def wait_for_task(session: ClientSession, task_id: str, poll_seconds: float) -> TaskState:
    """Poll ``tasks/get`` until the task ends or asks for input; return that state.

    A status notification from the server cuts a poll interval short.
    """
    news = QUESTIONS.news(task_id)
    try:
        while True:
            news.clear()
            task = await get_task(session, task_id)
            if task.status in TERMINAL or task.status == "input_required":
                return task
            interval = task.poll_interval_ms / 1000 if task.poll_interval_ms else poll_seconds
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(news.wait(), interval)
    finally:
        QUESTIONS.forget(task_id)


def result_of(task: TaskState) -> CallToolResult:
    """The tool's result of an ended task (a failed or cancelled one is an error result)."""
    if task.status == "completed" and task.result is not None:
        return CallToolResult.model_validate(task.result)
    error = task.error or {}
    said = error.get("message") or task.status_message or f"the task {task.status}"
    return CallToolResult(content=[TextContent(text=str(said))], is_error=True)


async def _resolve(created: TaskHandle, ctx: ClaimContext) -> CallToolResult:
    # A plain call_tool of a task tool: wait in place; no one can answer a question here.
    task = await wait_for_task(ctx.session, created.task_id, DEFAULT_POLL_SECONDS)
    if task.status == "input_required":
        await cancel_task(ctx.session, created.task_id)
        raise RuntimeError(
            f"MCP task {created.task_id} asks for input, which a call not made as a task "
            "cannot answer: give the tool `task: true` so a person can"
        )
    return result_of(task)


class TasksClientExtension(ClientExtension):
    """``io.modelcontextprotocol/tasks`` for ``mcp.Client(extensions=[...])``.

    It also observes ``notifications/tasks/status`` (either protocol), which
    wakes a task's poller early.
    """

    identifier = TASKS_EXTENSION

    def claims(self) -> Sequence[ResultClaim[Any]]:
        """The task handle a ``tools/call`` may answer with."""
        return (ResultClaim(result_type="task", model=TaskHandle, resolve=_resolve),)

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        """Status changes a server announces (``notifications/tasks/status``)."""
        return (
            NotificationBinding(
                method="notifications/tasks/status",
                params_type=TaskStatusNotificationParams,
                handler=QUESTIONS.on_status,
            ),
        )
