"""The audit record of a model call: what the model saw and what it said, secrets masked.

Opt-in per spec (``spec.audit.model_calls``): prompts and replies may hold
personal data, and a team decides whether its audit trail keeps them. The
values masked are the run's secrets that the spec can reach (``spec.secrets``
and the model's key), as ``[redacted:NAME]``, the masking tool results get.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.config import get_config

from plait.engine.governance.audit import audit
from plait.engine.governance.secrets import SecretSource, redact
from plait.engine.observability.node_path import node_path
from plait.engine.observability.roles import agent_role
from plait.engine.spec.models import GraphSpec, ModelDef
from plait.engine.spec.secret_refs import is_reserved


def audits_model_calls(spec: GraphSpec) -> bool:
    """Whether ``spec`` opted in to auditing its model calls."""
    return spec.spec.audit is not None and spec.spec.audit.model_calls


async def audit_model_call(
    spec: GraphSpec,
    model: str,
    definition: ModelDef,
    messages: Sequence[Any],
    reply: BaseMessage,
    source: SecretSource,
) -> None:
    """Record one model call of the running step (its node and run from LangGraph's config)."""
    try:
        config = get_config()
    except RuntimeError:  # called outside a graph run: no run to audit it for
        return
    node = str((config.get("metadata") or {}).get("langgraph_node", ""))
    names = [*spec.spec.secrets, *([definition.api_key_env] if definition.api_key_env else [])]
    wanted = [name for name in dict.fromkeys(names) if not is_reserved(name)]
    # What the source lacks cannot be in the messages through it: nothing to mask.
    secrets = await source.read(wanted) if wanted else {}
    role = agent_role()
    detail = {
        "model": model,
        "provider": definition.provider,
        "agent_role": role,
        "messages": [_plain(message) for message in messages],
        "reply": _plain(reply),
    }
    await audit(
        config,
        "model_call",
        node=node,
        tool=None,
        actor=f"agent:{role}" if role else f"node:{node}",
        # Where the node ran among subgraphs (`office/desk/classify`): `plait record` keeps
        # the reply under it. Node ids, not the run's text: nothing of it is masked.
        detail={**redact(detail, secrets), "path": node_path(node)},
    )


def _plain(message: Any) -> dict[str, Any]:
    """A message as the audit keeps it: its type, content and, where it has them, tool calls,
    the call it answers and its token usage."""
    if not isinstance(message, BaseMessage):
        return {"type": "text", "content": str(message)}
    plain: dict[str, Any] = {"type": message.type, "content": message.content}
    if isinstance(message, AIMessage):
        if message.tool_calls:
            plain["tool_calls"] = [
                {"name": call["name"], "args": call["args"], "id": call.get("id")}
                for call in message.tool_calls
            ]
        if message.usage_metadata:
            plain["usage"] = dict(message.usage_metadata)
    if isinstance(message, ToolMessage):
        plain["tool_call_id"] = message.tool_call_id
    return plain
