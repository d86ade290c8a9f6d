"""Which agent of the team the running code acts for (its role), for logs and audit records.

An ``agent`` node sets its role for the whole of its loop: the named agent it
runs (``agent: researcher``), else its node id. Everything that runs inside,
model calls, tool calls and the log lines they write, can read it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_ROLE: ContextVar[str | None] = ContextVar("plait_agent_role", default=None)


@contextlib.contextmanager
def acting_as(role: str) -> Iterator[None]:
    """Run the block as agent ``role``."""
    token = _ROLE.set(role)
    try:
        yield
    finally:
        _ROLE.reset(token)


def agent_role() -> str | None:
    """The agent the running code acts for, or ``None`` outside an agent node."""
    return _ROLE.get()
