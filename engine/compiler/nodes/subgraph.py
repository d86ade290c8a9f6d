"""``subgraph``: run another spec as a nested graph of this run."""

from __future__ import annotations

import warnings
from typing import Any

from langgraph.types import Durability

from plait.engine.compiler.context import CompileContext, Expr, Scope
from plait.engine.compiler.nodes.base import Compute
from plait.engine.observability.node_path import within
from plait.engine.spec.models import SubgraphNode

# Said of every detached child, which is given a durability on purpose (below).
warnings.filterwarnings(
    "ignore", message="`durability` has no effect when no checkpointer", category=UserWarning
)


def subgraph_compute(
    ctx: CompileContext,
    node_id: str,
    *,
    ref: str,
    inputs: dict[str, str],
    detached: bool = False,
) -> Compute:
    """Node ``node_id`` invokes the child compiled for ``ref``; the result is its output state.

    The child's nodes run :func:`~plait.engine.observability.node_path.within` ``node_id``
    (and the map item's index, for an item): their paths start with it.

    Invoked from inside the node, the child inherits the parent's checkpointer
    and gets its own checkpoint namespace under the node, so an ``interrupt()``
    in the child parks the parent and a resume continues the child. ``detached``
    (map items, which run many children in one task) runs it with no checkpointer, and
    so with durability ``exit``: a child inherits the run's durability, and under
    ``sync`` (how Plait runs) LangGraph 1.2 waits after each step for a save that a
    graph with no checkpointer never makes (``AttributeError: _put_checkpoint_fut``).
    """
    child = ctx.children[ref]
    graph = child.detached if detached else child.graph
    exprs = [(name, Expr(source)) for name, source in inputs.items()]
    child_inputs = child.input_fields
    durability: Durability | None = "exit" if detached else None

    async def compute(scope: Scope) -> Any:
        if exprs:
            payload = {name: scope.eval(expr) for name, expr in exprs}
        else:
            state = scope.state
            payload = {name: state[name] for name in child_inputs if name in state}
        with within(node_id, scope.index):
            return dict(await graph.ainvoke(payload, durability=durability))

    return compute


def build(node_id: str, node: SubgraphNode, ctx: CompileContext) -> Compute:
    """The ``subgraph`` node's work."""
    return subgraph_compute(ctx, node_id, ref=node.ref, inputs=node.input)
