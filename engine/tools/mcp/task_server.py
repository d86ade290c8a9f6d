"""Server side of the MCP Tasks extension, for any ``MCPServer`` (see :mod:`.task_protocol`).

The 2026-07-28 shapes. A tool listed in ``task_tools`` runs as a task when the
client asks for one: the call returns a task handle at once and the tool runs
in the background; ``tasks/get`` (with the result once it has ended) and
``tasks/cancel`` serve the rest. The tools here never ask for input, so there
is no ``tasks/update``. Tasks live
in this process's memory; an ended task is forgotten once its ``ttl`` (counted
from its creation) has passed. Enough for the examples and tests, and the
shape a durable implementation would keep.

Usage::

    tasks = TasksServerExtension(task_tools={"slow_report"})
    server = MCPServer("demo", extensions=[tasks])
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    CancelTaskRequestParams,
    GetTaskRequestParams,
)

from plait.engine.tools.mcp.task_protocol import TASKS_EXTENSION, TERMINAL, TaskHandle, TaskState

#: Default retention of a finished task, in milliseconds.
DEFAULT_TTL_MS = 60 * 60 * 1000
#: Polling interval suggested to clients, in milliseconds.
POLL_INTERVAL_MS = 200


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class _Entry:
    task: TaskState
    runner: asyncio.Task[Any] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    created: float = field(default_factory=time.monotonic)

    def finish(self, status: str, **outcome: Any) -> None:
        """Settle the task once: its final status and ``result`` or ``error``."""
        if self.done.is_set():
            return
        self.task = self.task.model_copy(
            update={"status": status, "last_updated_at": _now(), **outcome}
        )
        self.done.set()

    def expired(self, now: float) -> bool:
        """Whether the task has ended and its ``ttl`` has passed."""
        ttl = self.task.ttl_ms
        return self.done.is_set() and ttl is not None and now - self.created > ttl / 1000


class TasksServerExtension(Extension):
    """Runs the listed tools as tasks when a client asks (``_meta`` key :data:`TASKS_EXTENSION`)."""

    identifier = TASKS_EXTENSION

    def __init__(self, task_tools: Iterable[str]) -> None:
        self.task_tools = frozenset(task_tools)
        self._tasks: dict[str, _Entry] = {}

    def settings(self) -> dict[str, Any]:
        """Advertise which tools may run as tasks."""
        return {"tools": sorted(self.task_tools)}

    def methods(self) -> Sequence[MethodBinding]:
        """``tasks/get`` and ``tasks/cancel``."""
        return (
            MethodBinding("tasks/get", GetTaskRequestParams, self._get),
            MethodBinding("tasks/cancel", CancelTaskRequestParams, self._cancel),
        )

    async def intercept_tool_call(
        self,
        params: CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        """Start a task for a task tool the client asked to run as one; pass the rest through."""
        requested = (params.meta or {}).get(TASKS_EXTENSION)
        if params.name not in self.task_tools or not isinstance(requested, dict):
            return await call_next(ctx)
        self._forget_expired()
        ttl = requested.get("ttl")
        now = _now()
        task = TaskState(
            task_id=uuid.uuid4().hex,
            status="working",
            created_at=now,
            last_updated_at=now,
            ttl_ms=ttl if isinstance(ttl, int) else DEFAULT_TTL_MS,
            poll_interval_ms=POLL_INTERVAL_MS,
        )
        entry = _Entry(task)
        self._tasks[task.task_id] = entry
        # The tool outlives this request: it runs in its own asyncio task.
        entry.runner = asyncio.get_running_loop().create_task(self._run(entry, ctx, call_next))
        return TaskHandle.model_validate(task.model_dump(exclude={"result_type"}))

    async def _run(
        self, entry: _Entry, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> None:
        try:
            raw = await call_next(ctx)
            result = (
                raw
                if isinstance(raw, CallToolResult)
                else CallToolResult.model_validate(raw if raw is not None else {"content": []})
            )
        except asyncio.CancelledError:
            entry.finish("cancelled")
            return
        except Exception as exc:  # the tool's failure is the task's outcome
            entry.finish("failed", error={"code": -32603, "message": str(exc)})
            return
        # A tool's own error result is a completed task whose result says so.
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        entry.finish("completed", result=dumped)  # a no-op after tasks/cancel settled it

    def _forget_expired(self) -> None:
        now = time.monotonic()
        for task_id in [key for key, entry in self._tasks.items() if entry.expired(now)]:
            del self._tasks[task_id]

    def _entry(self, task_id: str) -> _Entry:
        entry = self._tasks.get(task_id)
        if entry is None:
            raise ValueError(f"no task {task_id!r}")
        return entry

    async def _get(
        self, ctx: ServerRequestContext[Any, Any], params: GetTaskRequestParams
    ) -> dict[str, Any]:
        return self._entry(params.task_id).task.model_dump(by_alias=True, exclude_none=True)

    async def _cancel(
        self, ctx: ServerRequestContext[Any, Any], params: CancelTaskRequestParams
    ) -> dict[str, Any]:
        entry = self._entry(params.task_id)
        if entry.task.status not in TERMINAL:
            entry.finish("cancelled")
            if entry.runner is not None:
                entry.runner.cancel()
        return {}
