"""``parallel``: fans out to its branches; the compiler adds the edges and the join.

The branches run in one LangGraph step; ``join`` waits for all of them
(``add_edge([...branches], join)``).
"""

from __future__ import annotations

from typing import Any

from plait.engine.compiler.context import CompileContext, Scope
from plait.engine.compiler.nodes.base import Compute
from plait.engine.spec.models import ParallelNode


def build(node_id: str, node: ParallelNode, ctx: CompileContext) -> Compute:
    """The ``parallel`` node's work: nothing but naming its branches (its result)."""
    branches = list(node.branches)

    async def compute(scope: Scope) -> Any:
        return list(branches)

    return compute
