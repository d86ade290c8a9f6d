"""The wire shapes of MCP tasks: the extension and the 2025-11-25 task-augmented request.

Two protocols ask a server to run a tool as a task; a server announces which
it speaks at initialize, and Plait uses that one (:func:`protocol_of`):

- ``core``: the 2025-11-25 revision's task-augmented request. The server's
  ``capabilities.tasks.requests.tools.call`` says it takes one; each tool says
  in ``tools/list`` whether it may (``execution.taskSupport``:
  ``forbidden``, the default, ``optional`` or ``required``). The client sends
  ``params.task = {"ttl": ms}`` on ``tools/call`` and gets a ``CreateTaskResult``
  ``{"task": Task}``. A task in ``input_required`` asks its question as a
  server request (``elicitation/create``) tagged
  ``_meta["io.modelcontextprotocol/related-task"]``, delivered while the client
  waits on ``tasks/result``. The TypeScript SDK (server-everything) speaks this.
- ``extension``: the Tasks extension of 2026-07-28 (``io.modelcontextprotocol/tasks``,
  SEP-2663), described below; Plait's own
  :mod:`plait.engine.tools.mcp.task_server` and ``fastmcp-tasks`` speak it.

Both then use ``tasks/get`` and ``tasks/cancel``; ``core`` also ``tasks/result``.

The extension (2026-07-28), whose shapes ``mcp_types`` does not have (its
``Task`` is the 2025-11-25 one), so they are here:

- a client that declares the extension may get, for ``tools/call``, a flat task
  handle ``{"resultType": "task", "taskId", "status", "ttlMs",
  "pollIntervalMs", ...}`` (:class:`TaskHandle`); Plait also asks with
  ``_meta["io.modelcontextprotocol/tasks"] = {}``, which its own server wants;
- ``tasks/get {taskId}`` → the task (:class:`TaskState`) with, by status, the
  tool's ``result`` inlined (``completed``), a JSON-RPC ``error`` (``failed``),
  or ``inputRequests`` (``input_required``: ``{key: elicitation/create
  request}``); there is no ``tasks/result``;
- ``tasks/update {taskId, inputResponses: {key: ElicitResult}}`` answers them;
- ``tasks/cancel {taskId}`` → an empty acknowledgement.
"""

from __future__ import annotations

from typing import Any, Literal

from mcp_types import Request, RequestParams, Result, ServerCapabilities, TaskStatus

#: The extension's identifier (capability key and ``_meta`` key).
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: The ``_meta`` key tying a server's request to the task it is about (``core``).
RELATED_TASK = "io.modelcontextprotocol/related-task"
#: Which task protocol a server speaks (see the module docstring).
TaskProtocol = Literal["core", "extension"]
#: A tool's ``execution.taskSupport`` (``core``); absent means ``forbidden``.
TaskSupport = Literal["forbidden", "optional", "required"]
#: Statuses after which a task never changes again.
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


class _Task(Result):
    """The task's own fields, flat in every answer of the extension."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class TaskHandle(_Task):
    """The extension's ``tools/call`` answer when the tool runs as a task (flat)."""

    result_type: Literal["task"] = "task"


class TaskState(_Task):
    """The extension's ``tasks/get`` answer: the task, and by status its result,
    error or questions (``input_requests``: key -> the server's request)."""

    result_type: Literal["complete"] = "complete"
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] | None = None


class UpdateTaskParams(RequestParams):
    """``tasks/update``: answers to the task's ``inputRequests``, by key."""

    task_id: str
    input_responses: dict[str, dict[str, Any]]


class UpdateTaskRequest(Request[UpdateTaskParams, Literal["tasks/update"]]):
    """``tasks/update`` (the extension)."""

    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskParams


def protocol_of(capabilities: ServerCapabilities) -> TaskProtocol:
    """The task protocol a server announced at initialize.

    ``core`` when it takes task-augmented ``tools/call`` requests; otherwise
    the extension, whose request a server without tasks simply ignores (it
    answers the call at once).
    """
    tasks = capabilities.tasks
    tools = tasks.requests.tools if tasks is not None and tasks.requests is not None else None
    return "core" if tools is not None and tools.call is not None else "extension"
