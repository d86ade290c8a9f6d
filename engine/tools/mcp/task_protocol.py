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
- ``extension``: the Tasks extension, described below; Plait's own
  :mod:`plait.engine.tools.mcp.task_server` speaks it.

Both then use ``tasks/get``, ``tasks/result`` and ``tasks/cancel`` alike.

The extension (``io.modelcontextprotocol/tasks``):

MCP 2.3 no longer ships tasks (they were core in protocol 2025-11-25 and moved
to an extension), so Plait carries both halves on the SDK's extension API:
:mod:`plait.engine.tools.mcp.tasks` (client) and :mod:`plait.engine.tools.mcp.task_server`
(server). The shapes follow the 2025-11-25 tasks protocol, whose models
``mcp_types`` still has:

- a client asks for task execution with ``_meta["io.modelcontextprotocol/tasks"]
  = {"ttl": <ms>}`` on ``tools/call``;
- a server that runs the tool as a task answers at once with a claimed result
  ``{"resultType": "task", "task": Task}`` (``Task``: ``taskId``, ``status``
  ``working|input_required|completed|failed|cancelled``, timestamps, ``ttl``,
  ``pollInterval``);
- ``tasks/get {taskId}`` → the task; ``tasks/result {taskId}`` → the tool's
  ``CallToolResult`` once the task is done; ``tasks/cancel {taskId}`` → the
  cancelled task.
"""

from __future__ import annotations

from typing import Literal

from mcp_types import Result, ServerCapabilities, Task
from pydantic import Field

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


class TaskCreated(Result):
    """The claimed ``tools/call`` result: the tool runs as a task, here is its handle."""

    result_type: Literal["task"] = Field(default="task", alias="resultType")
    task: Task


def protocol_of(capabilities: ServerCapabilities) -> TaskProtocol:
    """The task protocol a server announced at initialize.

    ``core`` when it takes task-augmented ``tools/call`` requests; otherwise
    the extension, whose request a server without tasks simply ignores (it
    answers the call at once).
    """
    tasks = capabilities.tasks
    tools = tasks.requests.tools if tasks is not None and tasks.requests is not None else None
    return "core" if tools is not None and tools.call is not None else "extension"
