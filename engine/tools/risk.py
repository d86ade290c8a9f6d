"""High-risk tools run only with an approved ticket.

A tool with ``risk: high`` is marked when it is loaded (``tool.metadata``);
before each call the gateway parks the run on ``interrupt()`` with an approval
payload (``kind: approval``, ``action``: the tool, its ``arguments``,
``reason: "high-risk tool"``). The decision is audited; ``approve`` calls the
tool with its arguments, ``edit`` with the edited ones, and ``reject`` raises
:class:`ToolRejected`, which an agent turns into an error answer for its model
and which fails a ``tool`` node. The call itself then goes through the normal
recorded path, so an approved call runs once.

The interrupt happens before the first ``await`` of the call, so several
high-risk calls in one model reply ask in the order the model made them, which
is the order LangGraph matches resume values by.
"""

from __future__ import annotations

from typing import Any

import pydantic
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.types import interrupt

from plait.engine.errors import NodeError
from plait.engine.governance.audit import audit
from plait.engine.spec.models import Decision

#: ``tool.metadata`` key holding the spec's ``risk``.
RISK_KEY = "plait_risk"
REASON = "high-risk tool"


class ToolRejected(NodeError):
    """A person rejected a high-risk call. Never retried."""

    def __init__(self, node: str, tool: str, comment: str | None) -> None:
        suffix = f": {comment}" if comment else ""
        super().__init__(node, f"the call of high-risk tool {tool!r} was rejected{suffix}")
        self.tool = tool
        self.comment = comment


def is_high_risk(tool: BaseTool) -> bool:
    """Whether ``tool`` was declared ``risk: high``."""
    return (tool.metadata or {}).get(RISK_KEY) == "high"


async def approved_arguments(
    tool: str, args: dict[str, Any], *, config: RunnableConfig, node: str
) -> dict[str, Any]:
    """Ask for approval of ``tool(args)``; return the arguments to call it with.

    Raises :class:`ToolRejected` on ``reject``. ``interrupt`` comes before any
    ``await`` (see the module docstring).
    """
    payload = {
        "kind": "approval",
        "node": node,
        "action": tool,
        "arguments": args,
        "reason": REASON,
    }
    answer = interrupt(payload)
    try:
        decision = Decision.model_validate(answer)
    except pydantic.ValidationError as exc:
        raise NodeError(node, f"invalid approval decision for {tool!r}: {exc}") from None
    edited = decision.decision == "edit" and decision.arguments is not None
    final = dict(decision.arguments) if edited and decision.arguments is not None else args
    actor = (config.get("configurable") or {}).get("plait_actor") or "reviewer"
    await audit(
        config,
        "approval",
        node=node,
        tool=tool,
        actor=str(actor),
        detail={
            "decision": decision.decision,
            "arguments": final,
            "comment": decision.comment,
            "reason": REASON,
        },
    )
    if decision.decision == "reject":
        raise ToolRejected(node, tool, decision.comment)
    return final
