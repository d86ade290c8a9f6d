"""Mermaid flowchart of a spec: node kinds as shapes, conditions and labels on edges.

Drawn from the spec, not from LangGraph's ``draw_mermaid``: the spec knows the
kinds, the ``switch`` conditions and the route labels, which the compiled
graph only holds as opaque functions.
"""

from __future__ import annotations

from plait.engine.compiler.edges import implied_edges
from plait.engine.spec.models import END, START, GraphSpec, StaticEdge, SwitchEdge

#: kind -> (open, close) of its Mermaid shape.
_SHAPES: dict[str, tuple[str, str]] = {
    "agent": ("[[", "]]"),
    "llm": ("(", ")"),
    "tool": ("[/", "/]"),
    "router": ("{", "}"),
    "map": ("[\\", "/]"),
    "parallel": ("[/", "\\]"),
    "subgraph": ("[[", "]]"),
    "approval": ("{{", "}}"),
    "wait": ("([", "])"),
    "python": ("[", "]"),
    "a2a": (">", "]"),
}


def _text(value: str) -> str:
    """Mermaid label text: quoted, with the characters that break it escaped."""
    escaped = value.replace('"', "#quot;").replace("\n", " ").replace("|", "#124;")
    return f'"{escaped}"'


def _id(name: str) -> str:
    # Mermaid reserves `end` (any case) as a keyword; START/END get fixed ids.
    if name == START:
        return "__start__"
    if name == END:
        return "__end__"
    return f"n_{name}"


def to_mermaid(spec: GraphSpec) -> str:
    """A ``flowchart TD`` of ``spec``."""
    lines = ["flowchart TD", f"  {_id(START)}([START])", f"  {_id(END)}([END])"]
    for node_id, node in spec.spec.nodes.items():
        opening, closing = _SHAPES[node.kind]
        lines.append(f"  {_id(node_id)}{opening}{_text(f'{node_id} · {node.kind}')}{closing}")
    for node_id, node in spec.spec.nodes.items():
        if node.kind == "parallel":
            for branch in node.branches:
                lines.append(f"  {_id(node_id)} --> {_id(branch)}")
                lines.append(f"  {_id(branch)} -.-> {_id(node.join)}")
    implied = implied_edges(spec)
    for edge in spec.spec.edges:
        source = _id(edge.from_)
        if isinstance(edge, StaticEdge):
            if (edge.from_, edge.to) not in implied:
                lines.append(f"  {source} --> {_id(edge.to)}")
        elif isinstance(edge, SwitchEdge):
            for case in edge.switch:
                lines.append(f"  {source} -->|{_text(case.when)}| {_id(case.to)}")
            lines.append(f"  {source} -->|default| {_id(edge.default)}")
        else:
            for label, to in edge.to.items():
                lines.append(f"  {source} -->|{_text(label)}| {_id(to)}")
            if edge.default is not None:
                lines.append(f"  {source} -->|default| {_id(edge.default)}")
    return "\n".join(lines) + "\n"
