"""Spec edges as LangGraph edges: static, switch (CEL conditions) and route (labels)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END as LG_END
from langgraph.graph import START as LG_START
from langgraph.graph import StateGraph

from plait.engine.compiler.context import NO_RESULT, CompileContext, Expr, Scope
from plait.engine.compiler.state import result_channel
from plait.engine.errors import NodeError
from plait.engine.spec.document import key_text
from plait.engine.spec.models import END, START, GraphSpec, RouteEdge, StaticEdge, SwitchEdge
from plait.engine.tools.rejection import RejectRoutes, reject_targets


def target(name: str) -> str:
    """A spec node name as LangGraph spells it (``START``/``END`` are pseudo-nodes)."""
    if name == START:
        return LG_START
    if name == END:
        return LG_END
    return name


def implied_edges(spec: GraphSpec) -> set[tuple[str, str]]:
    """Edges a ``parallel`` node implies: to each branch, and each branch to the join."""
    implied: set[tuple[str, str]] = set()
    for node_id, node in spec.spec.nodes.items():
        if node.kind == "parallel":
            for branch in node.branches:
                implied.add((node_id, branch))
                implied.add((branch, node.join))
    return implied


def add_edges(
    builder: StateGraph[Any, Any, Any, Any],
    spec: GraphSpec,
    ctx: CompileContext,
    *,
    gate: Callable[[Any], bool] | None = None,
) -> None:
    """Add every spec edge, plus the edges ``parallel`` nodes imply.

    With ``gate`` (a run can end early, e.g. ``budgets.on_exceed: return``), every
    edge leaving a node leads to ``END`` once ``gate(state)`` holds.
    """
    if gate is not None:
        builder = _Gated(builder, gate)  # type: ignore[assignment]
    if rejections := reject_targets(spec):  # tool nodes' on_reject (engine/tools/rejection.py)
        builder = RejectRoutes(builder, rejections)  # type: ignore[assignment]
    implied = implied_edges(spec)
    for node_id, node in spec.spec.nodes.items():
        if node.kind == "parallel":
            for branch in node.branches:
                builder.add_edge(node_id, branch)
            builder.add_edge(list(node.branches), node.join)
    for edge in spec.spec.edges:
        if isinstance(edge, StaticEdge):
            # A declared branch -> join edge would run the join once per branch.
            if (edge.from_, edge.to) not in implied:
                builder.add_edge(target(edge.from_), target(edge.to))
        elif isinstance(edge, SwitchEdge):
            destinations = [target(c.to) for c in edge.switch] + [target(edge.default)]
            builder.add_conditional_edges(
                target(edge.from_), _switch(edge, ctx), list(dict.fromkeys(destinations))
            )
        else:
            destinations = [target(t) for t in edge.to.values()]
            if edge.default is not None:
                destinations.append(target(edge.default))
            builder.add_conditional_edges(
                target(edge.from_), _route(edge, ctx), list(dict.fromkeys(destinations))
            )


class _Gated:
    """A builder whose edges check ``gate`` first (static edges become conditional)."""

    def __init__(self, builder: StateGraph[Any, Any, Any, Any], gate: Callable[[Any], bool]):
        self.builder = builder
        self.gate = gate

    def add_edge(self, source: str | list[str], to: str) -> None:
        if isinstance(source, list) or source == LG_START:
            # A join runs after its branches and ends the run itself; START never stops.
            self.builder.add_edge(source, to)
            return
        self.add_conditional_edges(source, _always(to), [to])

    def add_conditional_edges(
        self, source: str, choose: Callable[..., Awaitable[str]], targets: list[str]
    ) -> None:
        gate = self.gate

        async def gated(state: dict[str, Any], config: RunnableConfig) -> str:
            return LG_END if gate(state) else await choose(state, config)

        gated.__name__ = f"gated_{choose.__name__}"
        self.builder.add_conditional_edges(source, gated, list(dict.fromkeys([*targets, LG_END])))


def _always(to: str) -> Callable[..., Awaitable[str]]:
    async def choose(state: dict[str, Any], config: RunnableConfig) -> str:
        return to

    choose.__name__ = f"to_{to}"
    return choose


def route_sources(spec: GraphSpec) -> list[str]:
    """Nodes whose result a route edge reads (they keep it in a private channel)."""
    return [e.from_ for e in spec.spec.edges if isinstance(e, RouteEdge) and e.from_ != START]


def _switch(edge: SwitchEdge, ctx: CompileContext) -> Callable[..., Awaitable[str]]:
    cases = [(Expr(case.when), target(case.to)) for case in edge.switch]
    default = target(edge.default)
    source = edge.from_

    async def choose(state: dict[str, Any], config: RunnableConfig) -> str:
        scope = Scope(ctx, state, config)
        for condition, to in cases:
            try:
                hit = scope.eval(condition)
            except Exception as exc:
                raise NodeError(source, f"switch condition {condition.source!r}: {exc}") from exc
            if hit is True:
                return to
        return default

    choose.__name__ = f"switch_{source}"
    return choose


def _route(edge: RouteEdge, ctx: CompileContext) -> Callable[..., Awaitable[str]]:
    label_expr = Expr(edge.route)
    targets = {label: target(to) for label, to in edge.to.items()}
    default = target(edge.default) if edge.default is not None else None
    source = edge.from_
    channel = result_channel(source)

    async def choose(state: dict[str, Any], config: RunnableConfig) -> str:
        scope = Scope(ctx, state, config)
        try:
            label = scope.eval(label_expr, state.get(channel, NO_RESULT))
        except Exception as exc:
            raise NodeError(source, f"route {label_expr.source!r}: {exc}") from exc
        key = label_key(label)
        found = targets.get(key) if key is not None else None
        if found is not None:
            return found
        if default is not None:
            return default
        known = ", ".join(sorted(targets))
        raise NodeError(source, f"route label {label!r} has no target (labels: {known})")

    choose.__name__ = f"route_{source}"
    return choose


def label_key(label: Any) -> str | None:
    """Labels are YAML keys (strings): ``true`` and ``3`` match ``"true"`` and ``"3"``."""
    if label is None or isinstance(label, dict | list):
        return None
    return key_text(label)
