"""Tool allowlists: an agent calls only the tools its spec lists.

The agent's ``tools`` list is its allowlist. A model that asks for any other
tool (one the spec defines for someone else, or one that does not exist) gets
an error answer, the refusal goes to the custom stream as
``{"plait": "refused", "node", "tool", "reason"}`` and to the audit trail, and
nothing is executed. The list is fixed when the graph is compiled, so nothing a
model or a tool result says can widen it.
"""

from __future__ import annotations

from collections.abc import Iterable

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig

from plait.engine.governance.audit import audit
from plait.engine.observability import observe
from plait.engine.observability.emit import emit


def refusal_reason(tool: str, allowed: Iterable[str]) -> str:
    """Why ``tool`` is refused, naming what is allowed."""
    known = ", ".join(allowed) or "none"
    return f"tool {tool!r} is not allowed: no tool {tool!r} in this agent's tools ({known})"


async def refuse(
    config: RunnableConfig, *, node: str, tool: str, allowed: Iterable[str], call_id: str
) -> ToolMessage:
    """Refuse a call outside the allowlist: announce, audit, answer the model with an error."""
    reason = refusal_reason(tool, allowed)
    emit({"plait": "refused", "node": node, "tool": tool, "reason": reason})
    await audit(config, "refusal", node=node, tool=tool, actor="policy", detail={"reason": reason})
    observe.policy_refused(config, node=node, tool=tool, reason=reason)
    return ToolMessage(f"error: {reason}", tool_call_id=call_id, name=tool, status="error")
