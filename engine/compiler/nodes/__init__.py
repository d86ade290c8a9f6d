"""One module per node kind; each ``build(node_id, node, ctx)`` returns the kind's work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait.engine.compiler.nodes import (
    agent,
    approval,
    llm,
    map,
    parallel,
    python,
    router,
    subgraph,
    tool,
    wait,
)


def _build_a2a(node_id: str, node: Any, ctx: Any) -> Any:
    # Imported on first use: a2a-sdk (protobuf, google-api-core) would add
    # ~0.3 s to every `plait` command, and most specs have no a2a node.
    from plait.engine.compiler.nodes import a2a

    return a2a.build(node_id, node, ctx)


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
    "wait": wait.build,
    "python": python.build,
    "a2a": _build_a2a,
}
