"""``router``: a label computed from CEL; a route edge picks the next node by it."""

from __future__ import annotations

from typing import Any

from plait.engine.compiler.context import CompileContext, Expr, Scope
from plait.engine.compiler.nodes.base import Compute
from plait.engine.errors import NodeError
from plait.engine.spec.models import RouterNode


def build(node_id: str, node: RouterNode, ctx: CompileContext) -> Compute:
    """The ``router`` node's work: the result is the label."""
    label = Expr(node.label)
    labels = frozenset(node.labels)

    async def compute(scope: Scope) -> Any:
        value = scope.eval(label)
        if labels and value not in labels:
            known = ", ".join(sorted(labels))
            raise NodeError(node_id, f"label {value!r} is not one of the declared labels: {known}")
        return value

    return compute
