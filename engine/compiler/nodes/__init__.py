"""One module per node kind; each ``build(node_id, node, ctx)`` returns the kind's work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.compiler.nodes import (
    agent,
    approval,
    llm,
    map,
    parallel,
    python,
    router,
    subgraph,
    tool,
)

#: kind -> ``build(node_id, node, ctx) -> Compute``.
KIND_BUILDERS: dict[str, Callable[..., Any]] = {
    "agent": agent.build,
    "llm": llm.build,
    "tool": tool.build,
    "router": router.build,
    "map": map.build,
    "parallel": parallel.build,
    "subgraph": subgraph.build,
    "approval": approval.build,
    "python": python.build,
}
