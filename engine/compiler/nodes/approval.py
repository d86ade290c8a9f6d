"""``approval``: park the run on ``interrupt()`` until a person decides."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pydantic
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base.id import UUID as CheckpointId
from langgraph.types import interrupt

from plait.engine.compiler.context import CompileContext, Expr, Scope
from plait.engine.compiler.nodes.base import Compute
from plait.engine.errors import NodeError
from plait.engine.spec.errors import validation_problems
from plait.engine.spec.models import ApprovalNode, Decision, duration_seconds

#: uuid6 timestamps count 100 ns ticks from the Gregorian epoch (1582-10-15).
_GREGORIAN_OFFSET = 0x01B21DD213814000


def issued_at(config: RunnableConfig) -> datetime:
    """When the approval was first asked: the time of the checkpoint its step started from.

    A resumed node runs again from its start, so ``now()`` would move the
    expiry on every resume; the step's checkpoint id (a uuid6, stable across
    resumes) keeps it fixed without storing anything.
    """
    configurable = config.get("configurable") or {}
    checkpoints: dict[str, str] = configurable.get("checkpoint_map") or {}
    if not checkpoints:
        return datetime.now(UTC)
    ticks = CheckpointId(list(checkpoints.values())[-1]).time
    return datetime.fromtimestamp((ticks - _GREGORIAN_OFFSET) / 10_000_000, UTC)


def build(node_id: str, node: ApprovalNode, ctx: CompileContext) -> Compute:
    """The ``approval`` node's work: the result is ``{decision, arguments, comment}``."""
    arguments = Expr(node.arguments) if node.arguments is not None else None
    expires_in = duration_seconds(node.expires_in) if node.expires_in is not None else None

    async def compute(scope: Scope) -> Any:
        args = scope.eval(arguments) if arguments is not None else None
        expires_at = (
            issued_at(scope.config) + timedelta(seconds=expires_in)
            if expires_in is not None
            else None
        )
        payload = {
            "kind": "approval",
            "node": node_id,
            "action": node.action,
            "arguments": args,
            "reason": scope.render(node.reason) if node.reason is not None else None,
            "expires_at": expires_at.isoformat() if expires_at is not None else None,
            "on_expire": node.on_expire,
        }
        answer = interrupt(payload)
        if expires_at is not None and datetime.now(UTC) > expires_at:
            if node.on_expire == "fail":
                raise NodeError(node_id, f"the approval expired at {expires_at.isoformat()}")
            return {"decision": node.on_expire, "arguments": args, "comment": "expired"}
        try:
            decision = Decision.model_validate(answer)
        except pydantic.ValidationError as exc:
            raise NodeError(
                node_id,
                "invalid approval decision: expected {decision: approve|reject|edit, "
                f"arguments?, comment?}}; {validation_problems(exc)}",
            ) from None
        effective = (
            decision.arguments
            if decision.decision == "edit" and decision.arguments is not None
            else args
        )
        return {"decision": decision.decision, "arguments": effective, "comment": decision.comment}

    return compute
