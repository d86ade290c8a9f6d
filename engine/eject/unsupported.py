"""What a spec declares that an ejected graph cannot do: each is named, never dropped silently.

Graph-wide features (budgets, audit, A2A serving...) belong to Plait's run
driver or server; node features (an ``a2a`` node, MCP tools, compensation)
need Plait's runtime beyond what ``plait.runtime`` offers. ``plait eject``
refuses a spec with any of them, listing each; with ``--partial`` it writes
the module anyway, the graph-wide ones listed in its docstring and each node
that needs one raising ``NotImplementedError`` that names it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from plait.engine.spec.models import GraphSpec

__all__ = ["NotEjectable", "Unsupported", "unsupported"]


@dataclass(frozen=True)
class Unsupported:
    """One feature that does not map: ``where`` in the spec, ``node`` when it is a node's."""

    feature: str
    where: str
    why: str
    node: str | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.feature} ({self.why})"


class NotEjectable(Exception):
    """The spec uses features an ejected graph cannot have; ``problems`` lists them."""

    def __init__(self, ref: str, problems: list[Unsupported]) -> None:
        lines = "\n".join(f"  - {problem}" for problem in problems)
        super().__init__(
            f"{ref} cannot be ejected faithfully; these do not map to plain LangGraph:\n{lines}\n"
            "Eject anyway with --partial: the graph-wide ones are listed in the module's "
            "docstring and each node that needs one raises NotImplementedError."
        )
        self.problems = problems


_SERVER = "a feature of Plait's run driver and server"


def unsupported(spec: GraphSpec) -> list[Unsupported]:
    """Every feature of ``spec`` (not of the specs it refers to) that does not map."""
    return list(_graph_wide(spec)) + list(_per_node(spec))


def _graph_wide(spec: GraphSpec) -> Iterator[Unsupported]:
    body = spec.spec
    if body.budgets is not None:
        yield Unsupported("budgets", "spec.budgets", "checked by Plait's run driver per step")
    if body.limits is not None and body.limits.max_identical_tool_calls is not None:
        yield Unsupported(
            "loop detection",
            "spec.limits.max_identical_tool_calls",
            "counted by Plait's run driver",
        )
    if body.audit is not None and body.audit.model_calls:
        yield Unsupported("audit of model calls", "spec.audit", "rows in Plait's database")
    if body.a2a is not None and body.a2a.expose:
        yield Unsupported("serving the graph over A2A", "spec.a2a", _SERVER)
    if body.timeout is not None:
        yield Unsupported("the run's wall-clock timeout", "spec.timeout", _SERVER)
    if body.max_attempts is not None:
        yield Unsupported("attempts per worker", "spec.max_attempts", _SERVER)
    if body.secrets:
        yield Unsupported("secrets", "spec.secrets", "resolved per tenant by Plait's server")
    if body.evaluation is not None:
        yield Unsupported("graders", "spec.evaluation", "Plait's workers grade finished runs")
    if body.queue is not None:
        yield Unsupported("queue priority and deadline", "spec.queue", "Plait's run queue")
    if body.migrations:
        yield Unsupported("thread upgrades", "spec.migrations", "Plait moves parked threads")
    for name, tool in body.tools.items():
        where = f"spec.tools.{name}"
        if tool.limits is not None:
            yield Unsupported("tool limits", where, "shared by workers through Plait's database")
        if tool.compensate is not None:
            yield Unsupported("compensation", where, "Plait's saga runs it when the run fails")
        if tool.risk == "high":
            yield Unsupported("approval tickets", where, "kept in Plait's approvals inbox")
        if not tool.idempotent:
            yield Unsupported("non-idempotent calls", where, "settled from Plait's tool ledger")


def _per_node(spec: GraphSpec) -> Iterator[Unsupported]:
    body = spec.spec
    mcp = {name for name, tool in body.tools.items() if tool.kind == "mcp"}
    for node_id, node in body.nodes.items():
        where = f"spec.nodes.{node_id}"
        if node.kind == "a2a":
            yield Unsupported("a2a node", where, "a remote agent called through Plait", node_id)
        if node.compensate is not None:
            yield Unsupported("compensation", where, "Plait's saga runs it", node_id)
        if node.kind == "tool" and node.on_reject is not None:
            yield Unsupported("on_reject", where, "a rejected approval ticket", node_id)
        tools = _tools_of(spec, node)
        if used := sorted(mcp & tools):
            yield Unsupported(
                f"MCP tools ({', '.join(used)})",
                where,
                "sessions and task parking are Plait's",
                node_id,
            )
        if node.kind == "map" and node.do.kind == "subgraph":
            yield Unsupported("a map over a subgraph", where, "use a subgraph node", node_id)


def _tools_of(spec: GraphSpec, node: object) -> set[str]:
    kind = getattr(node, "kind", None)
    if kind == "tool":
        return {getattr(node, "tool", "")}
    if kind == "map":
        do = getattr(node, "do", None)
        return _tools_of(spec, do) if do is not None else set()
    if kind == "agent":
        named = getattr(node, "tools", None) or []
        agent = getattr(node, "agent", None)
        if not named and agent is not None:
            named = spec.spec.agents[agent].tools
        return set(named)
    return set()
