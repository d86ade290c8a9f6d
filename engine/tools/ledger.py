"""The compensable steps the running node completed, kept for its saga.

The tool gateway notes every successful call of a compensable tool here; the
saga wrapper (``plait.engine.compiler.saga``) opens one ledger per node step and
compensates what it holds when the step fails for good. It lives with the
tools so that the gateway, below the compiler, can write to it.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

#: One completed compensable step: ``{kind, name, node, ...}``.
Step = dict[str, Any]


@dataclass
class Ledger:
    """What the running node completed: compensable tool steps, and its result."""

    tools: frozenset[str]
    steps: list[Step] = field(default_factory=list)
    result: Any = None


#: The ledger of the node step in progress (``None`` outside a saga step).
LEDGER: ContextVar[Ledger | None] = ContextVar("plait_saga_ledger", default=None)


def note_tool_call(tool: str, node: str, args: Any, result: Any) -> None:
    """Called by the tool gateway after a successful call: remember it if compensable."""
    ledger = LEDGER.get()
    if ledger is not None and tool in ledger.tools:
        ledger.steps.append(
            {"kind": "tool", "name": tool, "node": node, "args": args, "result": result}
        )
