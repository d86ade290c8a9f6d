"""``on_reject``: where a ``tool`` node goes when a person rejects its high-risk call.

Without ``on_reject`` a rejection fails the node (and runs the compensations).
With it, the node succeeds with the result ``{rejected: true, tool, comment}``
and sets its private channel ``__rejected__<node>``; every edge leaving the
node is wrapped so that, when the channel is set, the run continues at the
``on_reject`` node instead. The channel is written on every visit, so a node
that is approved on a later visit follows its ordinary edges again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.channels.last_value import LastValue
from langgraph.graph import START as LG_START

from plait.engine.spec.models import GraphSpec, ToolNode
from plait.engine.tools.risk import ToolRejected

REJECTED_PREFIX = "__rejected__"
Choose = Callable[..., Awaitable[str]]


def rejected_channel(node: str) -> str:
    """The private channel that says ``node``'s last call was rejected."""
    return REJECTED_PREFIX + node


def reject_targets(spec: GraphSpec) -> dict[str, str]:
    """``tool`` node -> its ``on_reject`` node."""
    return {
        node_id: node.on_reject
        for node_id, node in spec.spec.nodes.items()
        if isinstance(node, ToolNode) and node.on_reject is not None
    }


def reject_channels(spec: GraphSpec) -> dict[str, Any]:
    """One private channel per node with ``on_reject``."""
    return {rejected_channel(n): Annotated[Any, LastValue(Any)] for n in reject_targets(spec)}


def rejection_result(exc: ToolRejected) -> dict[str, Any]:
    """The node's result when its call was rejected."""
    return {"rejected": True, "tool": exc.tool, "comment": exc.comment}


class RejectRoutes:
    """A builder whose edges from ``targets``' nodes go to ``on_reject`` after a rejection.

    Wraps a ``StateGraph`` (or another wrapper with the same two methods).
    """

    def __init__(self, builder: Any, targets: dict[str, str]) -> None:
        self.builder = builder
        self.targets = targets

    def add_edge(self, source: str | list[str], to: str) -> None:
        if isinstance(source, list) or source not in self.targets:
            self.builder.add_edge(source, to)
            return
        self.add_conditional_edges(source, _always(to), [to])

    def add_conditional_edges(self, source: str, choose: Choose, targets: list[str]) -> None:
        if source == LG_START or source not in self.targets:
            self.builder.add_conditional_edges(source, choose, targets)
            return
        channel, on_reject = rejected_channel(source), self.targets[source]

        async def after(state: dict[str, Any], config: RunnableConfig) -> str:
            return on_reject if state.get(channel) else await choose(state, config)

        after.__name__ = f"on_reject_{choose.__name__}"
        self.builder.add_conditional_edges(
            source, after, list(dict.fromkeys([*targets, on_reject]))
        )


def _always(to: str) -> Choose:
    async def choose(state: dict[str, Any], config: RunnableConfig) -> str:
        return to

    choose.__name__ = f"to_{to}"
    return choose


class RejectionAsResult:
    """A ``tool`` node's work with ``on_reject``: a rejection becomes the result, not a failure."""

    def __init__(self, node_id: str, compute: Callable[[Any], Awaitable[Any]]) -> None:
        self.channel = rejected_channel(node_id)
        self.compute = compute

    async def __call__(self, scope: Any) -> Any:
        try:
            result = await self.compute(scope)
        except ToolRejected as exc:
            scope.updates[self.channel] = True
            return rejection_result(exc)
        scope.updates[self.channel] = False
        return result
