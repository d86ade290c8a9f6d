"""The shape of the graph: entry, reachability, dead ends, cycles, fan-out, routing."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from plait.engine.spec.lint.context import LintContext, node_pointer, pointer
from plait.engine.spec.lint.references import edge_targets
from plait.engine.spec.models import (
    END,
    START,
    AgentNode,
    ApprovalNode,
    LlmNode,
    MapNode,
    Node,
    ParallelNode,
    RouteEdge,
    RouterNode,
    StaticEdge,
    ToolNode,
)

Graph = dict[str, list[str]]


def successors(ctx: LintContext) -> Graph:
    """Every node (and START) -> the nodes it can lead to, implicit parallel edges included."""
    nodes = ctx.body.nodes
    graph: Graph = defaultdict(list)
    for index, edge in enumerate(ctx.body.edges):
        for _, target in edge_targets(edge, pointer("spec", "edges", index)):
            if target in nodes or target == END:
                graph[edge.from_].append(target)
    for node_id, node in nodes.items():
        if isinstance(node, ParallelNode):
            # The compiler fans out to the branches and joins after all of them.
            for branch in node.branches:
                if branch in nodes:
                    graph[node_id].append(branch)
                    if node.join in nodes:
                        graph[branch].append(node.join)
        if isinstance(node, ToolNode) and node.on_reject in nodes:
            graph[node_id].append(node.on_reject)  # where a rejected high-risk call goes
    return graph


def check_graph(ctx: LintContext) -> None:
    """Entry, reachability, dead ends, unbounded cycles and ambiguous edges."""
    graph = successors(ctx)
    _check_edge_forms(ctx)
    if not graph.get(START):
        ctx.report(
            pointer("spec", "edges"),
            "no-entry",
            "no edge leaves `START`, so the graph has no first node",
            f"add `- {{from: START, to: {next(iter(ctx.body.nodes))}}}` to spec.edges",
        )
    else:
        reached = _reach(graph, [START])
        for node_id in ctx.body.nodes:
            if node_id not in reached:
                ctx.report(
                    node_pointer(node_id),
                    "unreachable-node",
                    f"node `{node_id}` can never run: no path leads to it from `START`",
                    f"add an edge to `{node_id}` from a node that runs, or remove the node",
                )
    _check_ends(ctx, graph)
    _check_cycles(ctx, graph)


def _reach(graph: Graph, starts: Iterable[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(starts)
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(graph.get(current, ()))
    return seen


def _check_ends(ctx: LintContext, graph: Graph) -> None:
    """Every node must have a path to END; report where the trouble starts, not upstream."""
    reverse: Graph = defaultdict(list)
    for source, targets in graph.items():
        for target in targets:
            reverse[target].append(source)
    finishing = _reach(reverse, [END])
    leaving = {edge.from_ for edge in ctx.body.edges}
    stuck = [n for n in ctx.body.nodes if n not in finishing]
    stuck_graph = {n: [t for t in graph.get(n, ()) if t in stuck] for n in stuck}
    for component in strongly_connected(stuck_graph):
        members = set(component)
        if any(t not in members for n in component for t in stuck_graph[n]):
            continue  # it leads into another stuck part; that one is reported
        first = component[0]
        if not graph.get(first):
            if first in leaving:
                continue  # its edges lead to unknown nodes, reported as `unknown-node`
            ctx.report(
                node_pointer(first),
                "dead-end",
                f"node `{first}` has no outgoing edge, so the run would stop there "
                "without reaching `END`",
                f"add an edge from `{first}`, e.g. `- {{from: {first}, to: END}}`",
            )
        else:
            names = ", ".join(f"`{n}`" for n in component)
            ctx.report(
                node_pointer(first),
                "no-path-to-end",
                f"no path leads from {names} to `END`: once there, the run can never finish",
                "add an edge from one of them to a node that reaches `END` (or to `END`)",
            )


def _check_cycles(ctx: LintContext, graph: Graph) -> None:
    nodes = ctx.body.nodes
    inner = {n: [t for t in graph.get(n, ()) if t in nodes] for n in nodes}
    for component in strongly_connected(inner):
        if len(component) == 1 and component[0] not in inner[component[0]]:
            continue
        if any(nodes[n].max_visits is not None for n in component):
            continue
        names = ", ".join(f"`{n}`" for n in component)
        ctx.report(
            node_pointer(component[0]),
            "unbounded-cycle",
            f"the cycle through {names} has no bound, so a run could loop forever",
            f"add `max_visits: <n>` to one node of the cycle, e.g. `{component[0]}`",
        )


def strongly_connected(graph: Graph) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), in the graph's key order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    order = {name: position for position, name in enumerate(graph)}
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = graph.get(node, [])
            if child < len(targets):
                work.append((node, child + 1))
                target = targets[child]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component, key=lambda name: order.get(name, len(order))))
    return found


def _check_edge_forms(ctx: LintContext) -> None:
    """A node leaves by static edges (fan-out) or by exactly one switch / route edge."""
    static: dict[str, list[int]] = defaultdict(list)
    conditional: dict[str, list[int]] = defaultdict(list)
    for index, edge in enumerate(ctx.body.edges):
        (static if isinstance(edge, StaticEdge) else conditional)[edge.from_].append(index)
    for source, indexes in conditional.items():
        if static.get(source):
            ctx.report(
                pointer("spec", "edges", indexes[0]),
                "ambiguous-edges",
                f"`{source}` has both a static edge (edge {static[source][0]}) and a "
                "switch/route edge, so where it goes next is ambiguous",
                "keep only the switch/route edge and use its `default` for the static target",
            )
        if len(indexes) > 1:
            ctx.report(
                pointer("spec", "edges", indexes[1]),
                "ambiguous-edges",
                f"`{source}` has {len(indexes)} switch/route edges (edges "
                f"{', '.join(map(str, indexes))}); only one can decide where it goes",
                "merge them into one edge: more `switch` cases, or more labels in `to`",
            )


# --------------------------------------------------------------------------- concurrency


def writes_of(node: Node) -> dict[str, tuple[str, ...]]:
    """State field -> where in the node it is written, for every field a node writes."""
    written: dict[str, tuple[str, ...]] = {field: ("writes", field) for field in node.writes}
    if node.output:
        written[node.output] = ("output",)
    if isinstance(node, AgentNode | LlmNode) and node.messages:
        written[node.messages] = ("messages",)
    if isinstance(node, MapNode) and node.errors:
        written[node.errors] = ("errors",)
    return written


def check_parallel_writers(ctx: LintContext) -> None:
    """Nodes of one step must not both write a ``replace`` field (LangGraph would fail)."""
    nodes = ctx.body.nodes
    groups: list[list[str]] = []
    for node in nodes.values():
        if isinstance(node, ParallelNode):
            groups.append([b for b in node.branches if b in nodes])
    fan_out: dict[str, list[str]] = defaultdict(list)
    for edge in ctx.body.edges:
        if isinstance(edge, StaticEdge) and edge.to in nodes:
            fan_out[edge.from_].append(edge.to)
    groups.extend(targets for targets in fan_out.values() if len(targets) > 1)
    reported: set[tuple[str, frozenset[str]]] = set()
    for group in groups:
        writers: dict[str, list[str]] = defaultdict(list)
        for node_id in dict.fromkeys(group):
            for field in writes_of(nodes[node_id]):
                writers[field].append(node_id)
        for field, ids in writers.items():
            declared = ctx.body.state.get(field)
            if len(ids) < 2 or declared is None or declared.reducer != "replace":
                continue
            key = (field, frozenset(ids))
            if key in reported:
                continue
            reported.add(key)
            first, second = ids[0], ids[1]
            ctx.report(
                node_pointer(second, *writes_of(nodes[second])[field]),
                "parallel-writers",
                f"`{first}` and `{second}` run in the same step and both write `{field}`, "
                "whose reducer is `replace`: the run would fail with two writers",
                f"give `{field}` a reducer that combines writes (e.g. `reducer: append`, "
                "`merge`, `sum`), or let only one of them write it",
            )


# --------------------------------------------------------------------------- routing

_DECISION_ROUTE = re.compile(r"^\s*result\s*(\.\s*decision|\[\s*['\"]decision['\"]\s*\])\s*$")


def check_routes(ctx: LintContext) -> None:
    """Router labels and approval decisions must each have somewhere to go."""
    nodes = ctx.body.nodes
    for index, edge in enumerate(ctx.body.edges):
        if not isinstance(edge, RouteEdge) or edge.default is not None:
            continue
        where = pointer("spec", "edges", index)
        if not edge.to:
            ctx.report(
                f"{where}/to",
                "route-label-missing",
                f"the route out of `{edge.from_}` has no targets and no `default`: "
                "every label would fail the run",
                "map each label to a node under `to` (`{label: node}`), or add `default: <node>`",
            )
            continue
        node = nodes.get(edge.from_)
        if isinstance(node, RouterNode):
            for label in node.labels:
                if label not in edge.to:
                    ctx.report(
                        f"{where}/to",
                        "route-label-missing",
                        f"router `{edge.from_}` can return `{label}`, but this route "
                        "has no target for it and no `default`",
                        f"add `{label}: <node>` under `to`, or add `default: <node>`",
                    )
        elif isinstance(node, ApprovalNode) and _DECISION_ROUTE.match(edge.route):
            missing = [d for d in ("approve", "reject") if d not in edge.to]
            if missing:
                ctx.report(
                    f"{where}/to",
                    "approval-route",
                    f"approval `{edge.from_}` routes on the decision but has no target "
                    f"for {' or '.join(f'`{d}`' for d in missing)} and no `default`",
                    "add " + ", ".join(f"`{d}: <node>`" for d in missing) + " under `to`, "
                    "or add `default: <node>`",
                )
            elif "edit" not in edge.to:
                ctx.report(
                    f"{where}/to",
                    "approval-route",
                    f"approval `{edge.from_}` has no target for an `edit` decision and "
                    "no `default`: a person who edits would fail the run",
                    "add `edit: <node>` under `to` (often the same node as `approve`), "
                    "or add `default: <node>`",
                    severity="warning",
                )
