"""``python``: call ``module:function`` with CEL arguments, or with the state."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from engine.compiler.context import CompileContext, Expr, Scope
from engine.compiler.nodes.base import Compute
from engine.spec.models import PythonNode

#: ``configurable`` flag: run sync functions in a thread (set by the server's workers).
OFFLOAD_SYNC_KEY = "plait_offload_sync"


def python_compute(ctx: CompileContext, *, function: str, args: dict[str, str]) -> Compute:
    """Call ``function`` (sync or async); the result is its return value.

    A sync function runs on the event loop, like a plain LangGraph node: a thread
    hop per step would cost more than most such functions take. A server worker
    shares its loop among many runs and must keep heartbeating and honour
    cancels, so it sets ``configurable["plait_offload_sync"]`` and sync
    functions run in a thread there.
    """
    exprs = [(name, Expr(source)) for name, source in args.items()]

    async def compute(scope: Scope) -> Any:
        target = ctx.function(function)
        call_args: tuple[Any, ...] = ()
        call_kwargs: dict[str, Any] = {}
        if exprs:
            call_kwargs = {name: scope.eval(expr) for name, expr in exprs}
        else:
            call_args = (dict(scope.state),)
        offload = scope.config.get("configurable", {}).get(OFFLOAD_SYNC_KEY, False)
        if offload and not inspect.iscoroutinefunction(target):
            value = await asyncio.to_thread(target, *call_args, **call_kwargs)
        else:
            value = target(*call_args, **call_kwargs)
        if inspect.isawaitable(value):
            value = await value
        return value

    return compute


def build(node_id: str, node: PythonNode, ctx: CompileContext) -> Compute:
    """The ``python`` node's work."""
    return python_compute(ctx, function=node.function, args=node.args)
