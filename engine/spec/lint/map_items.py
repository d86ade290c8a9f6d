"""Lint of what a map item's subgraph would wait for: a map item cannot wait.

A ``map`` runs its items within its one step, with no checkpoint to resume an item
from, so an item that reaches an ``approval`` or a ``wait`` node, a tool node of a
``risk: high`` tool (which asks for approval) or an agent node offered one, fails there
(``engine/compiler/nodes/waits.py``). An ``a2a`` node fails its item only when its
remote agent asks for input, which the spec cannot tell: a warning. Nodes are found at
any depth of the subgraphs an item runs (``engine/spec/nesting.py``). What a map's own
``do`` calls is checked in ``governance_tools.py`` (``high-risk-in-map``).
"""

from __future__ import annotations

from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.lint.context import LintContext, node_pointer
from plait.engine.spec.models import AgentNode, MapNode, ToolNode
from plait.engine.spec.nesting import Place, places

_CANNOT = (
    "a map item cannot wait: the map runs its items within its one step, with no checkpoint "
    "to resume an item from"
)


def check_waits_in_map(ctx: LintContext) -> None:
    """An ``approval``, ``wait`` or high-risk tool node in a map item's subgraph is an error;
    an ``a2a`` node there, a warning."""
    registry = ctx.registry

    def resolve(ref: str) -> LoadedSpec | None:
        return registry.resolve(ref) if ref in registry else None

    for map_id, node in ctx.body.nodes.items():
        if not isinstance(node, MapNode) or node.do.ref is None:
            continue
        ref = node.do.ref
        child = resolve(ref)
        if child is None or child.ref == ctx.loaded.ref:
            continue  # `unknown-ref` or `recursive-ref` says so
        loop = (
            f"or run `{ref}` once per item with a `subgraph` node in a cycle (one item per "
            "visit, bounded by `max_visits`) instead of a `map`"
        )
        for place in places(child, resolve):
            what = _waits(place)
            if what is None:
                continue
            path = f"{map_id}[i]/{place.path}"
            if place.node.kind == "a2a":
                ctx.report(
                    node_pointer(map_id, "do", "ref"),
                    "a2a-in-map",
                    f"map `{map_id}` runs `{ref}` for each item, and its a2a node "
                    f"`{place.node_id}` (at `{path}`) fails its item if the remote agent asks "
                    f"for input, since {_CANNOT}",
                    "make sure the agent answers without asking (send what it would ask for in "
                    f"the message), or call it from an `a2a` node outside the map, {loop}",
                    severity="warning",
                )
            else:
                ctx.report(
                    node_pointer(map_id, "do", "ref"),
                    "waits-in-map",
                    f"map `{map_id}` runs `{ref}` for each item, and its {what} "
                    f"`{place.node_id}` (at `{path}`) would wait in each item that reaches "
                    f"it, but {_CANNOT}",
                    f"move that node out of the map (before or after it), {loop}",
                )


def _waits(place: Place) -> str | None:
    """What kind of waiting node ``place`` is, or ``None``."""
    node = place.node
    if node.kind in ("approval", "wait", "a2a"):
        return f"{node.kind} node"
    body = place.spec.spec.spec
    if isinstance(node, ToolNode) and body.high_risk([node.tool]):
        return f"tool node of high-risk tool `{node.tool}` (which asks for approval)"
    if isinstance(node, AgentNode):
        risky = body.high_risk(body.agent_tools(node.agent, node.tools))
        if not risky:
            return None
        names = ", ".join(f"`{name}`" for name in risky)
        return f"agent node with high-risk tool {names} (which asks for approval)"
    return None
