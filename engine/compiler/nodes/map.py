"""``map``: scatter-gather over a list in one node, with asyncio.

Items run as tasks of this one step under a semaphore (``concurrency``), each
under ``asyncio.wait_for`` (``item_timeout``). Failures are recorded, not
raised, until ``min_success`` decides (see docs/decisions.md for why not ``Send``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.errors import GraphInterrupt

from plait.engine.compiler.context import CompileContext, Expr, Scope
from plait.engine.compiler.nodes.agent import agent_compute
from plait.engine.compiler.nodes.base import Compute
from plait.engine.compiler.nodes.llm import llm_compute
from plait.engine.compiler.nodes.python import python_compute
from plait.engine.compiler.nodes.subgraph import subgraph_compute
from plait.engine.compiler.nodes.tool import tool_compute
from plait.engine.compiler.nodes.waits import ItemCannotWait, in_item
from plait.engine.errors import NodeError
from plait.engine.governance.loops import StopsRun
from plait.engine.observability.emit import emit
from plait.engine.observability.node_path import map_item_work
from plait.engine.spec.models import MapItemNode, MapNode, duration_seconds


def item_compute(ctx: CompileContext, node_id: str, do: MapItemNode) -> Compute:
    """The work of one item, by ``do.kind``."""
    if do.kind == "agent":
        return agent_compute(
            ctx,
            node_id,
            agent=do.agent,
            model=do.model,
            system=do.system,
            tools=do.tools,
            max_iterations=None,
            prompt=_required(node_id, "prompt", do.prompt),
        )
    if do.kind == "llm":
        return llm_compute(
            ctx,
            node_id,
            model=_required(node_id, "model", do.model),
            system=do.system,
            prompt=_required(node_id, "prompt", do.prompt),
            schema=do.schema_,
        )
    if do.kind == "tool":
        return tool_compute(ctx, node_id, tool=_required(node_id, "tool", do.tool), args=do.args)
    if do.kind == "python":
        return python_compute(
            ctx, function=_required(node_id, "function", do.function), args=do.args
        )
    return subgraph_compute(
        ctx, node_id, ref=_required(node_id, "ref", do.ref), inputs=do.input, detached=True
    )


def _required(node_id: str, key: str, value: str | None) -> str:
    if value is None:
        raise ValueError(f"map node {node_id!r}: `do` of this kind needs `{key}`")
    return value


def build(node_id: str, node: MapNode, ctx: CompileContext) -> Compute:
    """The ``map`` node's work: the result is the successful items' results, in item order."""
    items_expr = Expr(node.items)
    work = item_compute(ctx, node_id, node.do)
    contribution = Expr(node.do.result) if node.do.result is not None else None
    timeout = duration_seconds(node.item_timeout) if node.item_timeout is not None else None
    errors_field = node.errors

    async def compute(scope: Scope) -> Any:
        items = scope.eval(items_expr)
        if not isinstance(items, list):
            raise NodeError(node_id, f"`items` must give a list, got {type(items).__name__}")
        gate = asyncio.Semaphore(node.concurrency)

        async def one(index: int, item: Any) -> Any:
            async with gate:
                item_scope = scope.for_item(item, index)
                try:
                    try:
                        # Its calls are the item's (`each[1]`): recorded and replayed apart
                        # from the other items', which run at once and may ask in any order.
                        with map_item_work(node_id, index):
                            value = await asyncio.wait_for(work(item_scope), timeout)
                    except GraphInterrupt as exc:  # its own work waits (a high-risk tool)
                        raise in_item(node_id, node.do.kind, index, exc) from None
                    if contribution is not None:
                        value = item_scope.eval(contribution, value)
                except Exception:
                    emit({"plait": "map_item", "node": node_id, "index": index, "ok": False})
                    raise
                emit({"plait": "map_item", "node": node_id, "index": index, "ok": True})
                return value

        outcomes = await asyncio.gather(
            *(one(i, item) for i, item in enumerate(items)), return_exceptions=True
        )
        results: list[Any] = []
        failures: list[dict[str, Any]] = []
        for index, (item, outcome) in enumerate(zip(items, outcomes, strict=True)):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, Exception) or (
                    isinstance(outcome, StopsRun) and outcome.ends_map
                ):
                    # Cancellation is no item failure; nor is a replay leaving its recording.
                    raise outcome
                failures.append(
                    {"item": item, "index": index, "error": _describe(outcome, timeout)}
                )
            else:
                results.append(outcome)
        needed = len(items) if node.min_success is None else node.min_success
        if len(results) < needed:
            first = failures[0]
            raise NodeError(
                node_id,
                f"only {len(results)} of {len(items)} items succeeded (min_success={needed}); "
                f"item {first['index']} failed: {first['error']}",
            )
        if errors_field is not None:
            scope.updates[errors_field] = failures
        if failures:
            # The run's finish reads it: a run whose map lost items partially succeeded.
            task = (scope.config.get("configurable") or {}).get("checkpoint_ns", "")
            emit(
                {
                    "plait": "map_lost",
                    "node": node_id,
                    "task": task,
                    "items": len(items),
                    "lost": len(failures),
                }
            )
        return results

    return compute


def _describe(exc: Exception, timeout: float | None) -> str:
    if isinstance(exc, TimeoutError) and not str(exc):
        return f"timed out after {timeout:g}s"
    if isinstance(exc, ItemCannotWait):
        return str(exc)  # with the path of the node that would wait
    if isinstance(exc, NodeError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"
