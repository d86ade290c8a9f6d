"""``tool``: call one tool with arguments computed from CEL."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plait.engine.compiler.context import CompileContext, Scope, compile_arguments
from plait.engine.compiler.nodes.base import Compute
from plait.engine.spec.models import Argument, ToolNode
from plait.engine.tools.gateway import call_tool
from plait.engine.tools.rejection import RejectionAsResult


def tool_compute(
    ctx: CompileContext, node_id: str, *, tool: str, args: Mapping[str, Argument]
) -> Compute:
    """Call ``tool`` through the gateway (at most once per step); the result is its return value."""
    compiled = compile_arguments(args)

    async def compute(scope: Scope) -> Any:
        values = scope.arguments(compiled)
        await ctx.load_tools((tool,))
        return await call_tool(
            ctx.tool(tool),
            values,
            config=scope.config,
            node=node_id,
            position=(0,),
            item=scope.index,
        )

    return compute


def build(node_id: str, node: ToolNode, ctx: CompileContext) -> Compute:
    """The ``tool`` node's work."""
    compute = tool_compute(ctx, node_id, tool=node.tool, args=node.args)
    # on_reject: a rejected high-risk call is a result the edges route on (rejection.py).
    return RejectionAsResult(node_id, compute) if node.on_reject is not None else compute
