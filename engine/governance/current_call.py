"""The tool call in progress: what the gateway tells the tool it is invoking.

A leaf module (the gateway imports the compiler, the compiler loads tools):
the gateway sets it around each call, tools read it, e.g. MCP tools send the
idempotency key to their server and record their tasks under it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from langchain_core.runnables import RunnableConfig


@dataclass(frozen=True)
class ToolCall:
    """One gateway call: its idempotency key (None when unrecorded), node and run config."""

    key: str | None
    node: str
    config: RunnableConfig


_CURRENT: ContextVar[ToolCall | None] = ContextVar("plait_tool_call", default=None)


def current_call() -> ToolCall | None:
    """The gateway call in progress in this task, if any."""
    return _CURRENT.get()


@contextmanager
def calling(call: ToolCall) -> Iterator[None]:
    """Make ``call`` the call in progress for the block."""
    token = _CURRENT.set(call)
    try:
        yield
    finally:
        _CURRENT.reset(token)
