"""The run values a tool call is made with, for MCP servers whose ``args``/``env`` read them.

A node step provides its ``input`` and ``run`` roots here (the compiler's node
runner does, for specs with per-run server values); an MCP tool reads them when
it loads and at each call, to start or reuse the server session of those
values. A contextvar, like the call in progress
(:mod:`plait.engine.governance.current_call`): tools are called deep inside
LangChain and the gateway, which do not pass a node's scope along.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

#: A root's value by name (``input``, ``run``).
RunValues = Callable[[str], Any]

_CURRENT: ContextVar[RunValues | None] = ContextVar("plait_run_values", default=None)


def current_values() -> RunValues | None:
    """The run values of the node step in progress in this task, if any."""
    return _CURRENT.get()


@contextmanager
def providing(values: RunValues) -> Iterator[None]:
    """Make ``values`` the run values for the block."""
    token = _CURRENT.set(values)
    try:
        yield
    finally:
        _CURRENT.reset(token)
