"""``python``: call ``module:function`` with CEL arguments, or with the state."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from plait.engine.compiler.context import CompileContext, Scope, compile_arguments
from plait.engine.compiler.nodes.base import Compute
from plait.engine.spec.models import Argument, PythonNode

#: ``configurable`` flag: run sync functions in a thread (set by the server's workers).
OFFLOAD_SYNC_KEY = "plait_offload_sync"
#: Attribute a sync function carries (set by :func:`inline`) to stay on the event loop.
INLINE_ATTRIBUTE = "__plait_inline__"

F = TypeVar("F", bound=Callable[..., Any])


def inline(function: F) -> F:
    """Mark a sync ``python`` node function as quick and non-blocking: workers call it on
    their event loop instead of in a thread.

    Only for functions that return in well under a millisecond and never wait
    (no I/O, no locks, no sleeps): while one runs, every other run of the
    worker and its heartbeats wait. Anything else keeps the thread (the default).
    """
    setattr(function, INLINE_ATTRIBUTE, True)
    return function


def _offloaded(target: Callable[..., Any], config: Mapping[str, Any]) -> bool:
    """Whether ``target`` runs in a thread: a sync function, in a worker, not marked inline."""
    if not config.get("configurable", {}).get(OFFLOAD_SYNC_KEY, False):
        return False
    if inspect.iscoroutinefunction(target):
        return False
    return not getattr(target, INLINE_ATTRIBUTE, False)


def python_compute(ctx: CompileContext, *, function: str, args: Mapping[str, Argument]) -> Compute:
    """Call ``function`` (sync or async); the result is its return value.

    A sync function runs on the event loop, like a plain LangGraph node: a thread
    hop per step would cost more than most such functions take. A server worker
    shares its loop among many runs and must keep heartbeating and honour
    cancels, so it sets ``configurable["plait_offload_sync"]`` and sync
    functions run in a thread there, unless marked with :func:`inline`.
    """
    compiled = compile_arguments(args)

    async def compute(scope: Scope) -> Any:
        target = ctx.function(function)
        call_args: tuple[Any, ...] = ()
        call_kwargs: dict[str, Any] = {}
        if compiled:
            call_kwargs = scope.arguments(compiled)
        else:
            call_args = (dict(scope.state),)
        if _offloaded(target, scope.config):
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
