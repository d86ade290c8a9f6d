"""The wire shapes of the MCP Tasks extension (``io.modelcontextprotocol/tasks``).

MCP 2.3 no longer ships tasks (they were core in protocol 2025-11-25 and moved
to an extension), so Plait carries both halves on the SDK's extension API:
:mod:`engine.tools.mcp.tasks` (client) and :mod:`engine.tools.mcp.task_server`
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

from mcp_types import Result, Task
from pydantic import Field

#: The extension's identifier (capability key and ``_meta`` key).
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: Statuses after which a task never changes again.
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


class TaskCreated(Result):
    """The claimed ``tools/call`` result: the tool runs as a task, here is its handle."""

    result_type: Literal["task"] = Field(default="task", alias="resultType")
    task: Task
