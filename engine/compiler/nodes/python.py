"""``python``: call ``module:function`` with CEL arguments, or with the state."""

from __future__ import annotations

import inspect
from typing import Any

from engine.compiler.context import CompileContext, Expr, Scope
from engine.compiler.nodes.base import Compute
from engine.spec.models import PythonNode


def python_compute(ctx: CompileContext, *, function: str, args: dict[str, str]) -> Compute:
    """Call ``function`` (sync or async); the result is its return value.

    A sync function runs on the event loop, like a plain LangGraph node: a thread
    hop per step would cost more than most such functions take. Long-running
    code should be ``async``.
    """
    exprs = [(name, Expr(source)) for name, source in args.items()]

    async def compute(scope: Scope) -> Any:
        target = ctx.function(function)
        if exprs:
            value = target(**{name: scope.eval(expr) for name, expr in exprs})
        else:
            value = target(dict(scope.state))
        if inspect.isawaitable(value):
            value = await value
        return value

    return compute


def build(node_id: str, node: PythonNode, ctx: CompileContext) -> Compute:
    """The ``python`` node's work."""
    return python_compute(ctx, function=node.function, args=node.args)
