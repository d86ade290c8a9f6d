"""Loop detection (``spec.limits.max_identical_tool_calls``).

Every tool call is counted by tool and canonical arguments in the private
channel ``__tool_calls``; a call beyond the limit fails the run with
:class:`LoopDetected` before the tool runs. As with budgets, each step writes
only its own counts and the channel's reducer adds them up, so the count
survives resume and parallel branches; the counter of the running step is
found through a context variable.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar

from plait.engine.errors import NodeError
from plait.engine.observability.emit import emit

#: The private channel with the run's tool-call counts (``{call key: count}``).
TOOL_CALLS = "__tool_calls"


def add_counts(current: Mapping[str, int] | None, delta: Mapping[str, int]) -> dict[str, int]:
    """Reducer of ``__tool_calls``: counts add up."""
    counts = dict(current or {})
    for key, amount in delta.items():
        counts[key] = counts.get(key, 0) + amount
    return counts


class StopsRun(NodeError):
    """An error that ends the run wherever it is raised (agents do not hand it to the model).

    In a ``map`` item it fails the item, as any error does, unless ``ends_map`` says it
    ends the whole run there too.
    """

    #: Whether a ``map`` re-raises it instead of counting one lost item.
    ends_map: ClassVar[bool] = False


class LoopDetected(StopsRun):
    """The same tool was about to be called with the same arguments once too often."""

    def __init__(self, node: str, tool: str, args: Any, count: int, limit: int) -> None:
        shown = json.dumps(args, sort_keys=True, default=str)[:200]
        super().__init__(
            node,
            f"loop detected: tool {tool!r} called {count} times with the same arguments "
            f"{shown} (limits.max_identical_tool_calls={limit})",
        )
        self.tool = tool
        self.count = count
        self.limit = limit


def call_key(tool: str, args: Any) -> str:
    """A short stable key for a tool and its arguments."""
    text = json.dumps([tool, args], sort_keys=True, separators=(",", ":"), default=str)
    return f"{tool}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


@dataclass
class LoopCounter:
    """The counts of one step on top of the run's."""

    node: str
    limit: int
    base: Mapping[str, int]
    delta: dict[str, int] = field(default_factory=dict)

    def count(self, tool: str, args: Any) -> None:
        """Count a call about to be made; raise :class:`LoopDetected` past the limit."""
        key = call_key(tool, args)
        count = self.base.get(key, 0) + self.delta.get(key, 0) + 1
        if count > self.limit:
            emit(
                {
                    "plait": "loop",
                    "node": self.node,
                    "tool": tool,
                    "count": count,
                    "limit": self.limit,
                }
            )
            raise LoopDetected(self.node, tool, args, count, self.limit)
        self.delta[key] = self.delta.get(key, 0) + 1


_COUNTER: ContextVar[LoopCounter | None] = ContextVar("plait_loop_counter", default=None)


def count_tool_call(tool: str, args: Any) -> None:
    """Count a tool call of the running step (nothing when the spec sets no limit)."""
    counter = _COUNTER.get()
    if counter is not None:
        counter.count(tool, args)


def start_counting(counter: LoopCounter) -> Any:
    """Make ``counter`` the running step's; returns the token for :func:`stop_counting`."""
    return _COUNTER.set(counter)


def stop_counting(token: Any) -> None:
    """Restore the counter that was current before :func:`start_counting`."""
    _COUNTER.reset(token)
