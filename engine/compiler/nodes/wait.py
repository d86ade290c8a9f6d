"""``wait``: park the run on ``interrupt()`` until a time; a durable timer resumes it.

The interrupt's value says when (``{"kind": "wait", "node", "until"}``); the
server writes a timer row for it when the run parks, and whichever worker finds
it due resumes the thread with :data:`TIMER_FIRED` (server/workers/timer_firer.py).
No worker waits meanwhile. A person may resume it earlier with any value.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from langgraph.types import interrupt

from plait.engine.compiler.context import CompileContext, Expr, Scope
from plait.engine.compiler.nodes.approval import issued_at
from plait.engine.compiler.nodes.base import Compute
from plait.engine.errors import NodeError
from plait.engine.spec.models import WaitNode, duration_seconds

#: The ``plait`` mark of the value a fired timer resumes a wait with.
TIMER_FIRED = "timer"


def build(node_id: str, node: WaitNode, ctx: CompileContext) -> Compute:
    """The ``wait`` node's work: the result is ``{until, by: timer|person, value?}``."""
    seconds = duration_seconds(node.for_) if node.for_ is not None else None
    until = Expr(node.until) if node.until is not None else None

    async def compute(scope: Scope) -> Any:
        if seconds is not None:
            # From when the node was first reached: a resumed node runs again from its start.
            due = issued_at(scope.config) + timedelta(seconds=seconds)
        else:
            assert until is not None  # the model allows exactly one of the two
            due = _time_of(node_id, scope.eval(until))
        if due <= datetime.now(UTC):
            return {"until": due.isoformat(), "by": "timer"}
        answer = interrupt({"kind": "wait", "node": node_id, "until": due.isoformat()})
        if isinstance(answer, Mapping) and answer.get("plait") == TIMER_FIRED:
            return {"until": due.isoformat(), "by": "timer"}
        return {"until": due.isoformat(), "by": "person", "value": answer}

    return compute


def _time_of(node_id: str, value: Any) -> datetime:
    """``until``'s value as an aware time: an ISO 8601 string or a CEL timestamp."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise NodeError(
                node_id,
                f"`until` gave {value!r}, which is not an ISO 8601 time; "
                "give e.g. '2026-12-03T15:00:00Z'",
            ) from None
    else:
        raise NodeError(
            node_id,
            f"`until` gave a {type(value).__name__}; give an ISO 8601 time string "
            "(e.g. '2026-12-03T15:00:00Z') or a CEL timestamp",
        )
    if moment.tzinfo is None:
        raise NodeError(
            node_id,
            f"`until` gave {value!r} without a timezone; add one (e.g. 'Z' or '+01:00')",
        )
    return moment.astimezone(UTC)
