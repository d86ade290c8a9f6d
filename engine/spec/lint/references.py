"""Names that must exist: nodes, models, tools, agents, specs, fixture files."""

from __future__ import annotations

import re
from collections.abc import Mapping

from plait.engine.spec.document import LoadedSpec, escape_pointer
from plait.engine.spec.lint.context import LintContext, did_you_mean, known, node_pointer, pointer
from plait.engine.spec.models import (
    END,
    START,
    AgentNode,
    LlmNode,
    MapItemNode,
    MapNode,
    McpServerDef,
    ParallelNode,
    RouteEdge,
    StaticEdge,
    SubgraphNode,
    SwitchEdge,
    ToolNode,
)
from plait.engine.spec.registry import SpecRegistry


def check_references(ctx: LintContext) -> None:
    """Report every reference to something the spec (or the registry) does not define."""
    _check_definitions(ctx)
    for node_id, node in ctx.body.nodes.items():
        if isinstance(node, LlmNode):
            _name(ctx, node.model, "model", node_pointer(node_id, "model"))
            for index, route in enumerate(node.routes):
                _name(ctx, route.model, "model", node_pointer(node_id, "routes", index, "model"))
        elif isinstance(node, ToolNode):
            _name(ctx, node.tool, "tool", node_pointer(node_id, "tool"))
        elif isinstance(node, AgentNode):
            _agent_node(ctx, node_id, node)
        elif isinstance(node, ParallelNode):
            for index, branch in enumerate(node.branches):
                _node(ctx, branch, node_pointer(node_id, "branches", index))
            _node(ctx, node.join, node_pointer(node_id, "join"))
        elif isinstance(node, SubgraphNode):
            if _ref(ctx, node.ref, node_pointer(node_id, "ref")):
                _child_inputs(ctx, node_id, node)
        elif isinstance(node, MapNode):
            _map_item(ctx, node.do, node_pointer(node_id, "do"))
    _check_edges(ctx)


def _check_definitions(ctx: LintContext) -> None:
    for name, agent in ctx.body.agents.items():
        _name(ctx, agent.model, "model", pointer("spec", "agents", name, "model"))
        for index, tool in enumerate(agent.tools):
            _name(ctx, tool, "tool", pointer("spec", "agents", name, "tools", index))
        for index, route in enumerate(agent.routes):
            where = pointer("spec", "agents", name, "routes", index, "model")
            _name(ctx, route.model, "model", where)
        if agent.context is not None and agent.context.summary_model is not None:
            where = pointer("spec", "agents", name, "context", "summary_model")
            _name(ctx, agent.context.summary_model, "model", where)
    _check_mcp(ctx)
    if ctx.body.evaluation is not None:
        for name, grader in ctx.body.evaluation.graders.items():
            if grader.llm is not None:
                where = pointer("spec", "evaluation", "graders", name, "llm", "model")
                _name(ctx, grader.llm.model, "model", where)
    for name, model in ctx.body.models.items():
        if model.fixture is None:
            continue
        path = ctx.loaded.base_dir / model.fixture
        if not path.is_file():
            ctx.report(
                pointer("spec", "models", name, "fixture"),
                "missing-file",
                f"fixture file `{model.fixture}` does not exist (looked for {path})",
                "give a path relative to the spec's folder, or create the file",
            )


def _agent_node(ctx: LintContext, node_id: str, node: AgentNode) -> None:
    if node.agent is not None:
        _name(ctx, node.agent, "agent", node_pointer(node_id, "agent"))
    if node.model is not None:
        _name(ctx, node.model, "model", node_pointer(node_id, "model"))
    if node.agent is None and node.model is None:
        ctx.report(
            node_pointer(node_id),
            "incomplete-node",
            f"agent node `{node_id}` names neither an `agent` nor a `model`",
            "add `agent: <name in spec.agents>`, or define it inline with `model:` "
            "(and `tools:`, `system:`)",
        )
    for index, tool in enumerate(node.tools):
        _name(ctx, tool, "tool", node_pointer(node_id, "tools", index))
    for index, route in enumerate(node.routes or []):
        _name(ctx, route.model, "model", node_pointer(node_id, "routes", index, "model"))
    if node.context is not None and node.context.summary_model is not None:
        where = node_pointer(node_id, "context", "summary_model")
        _name(ctx, node.context.summary_model, "model", where)


#: What each kind of map item needs (besides ``kind``).
_ITEM_NEEDS = {
    "llm": ("model", "prompt"),
    "tool": ("tool",),
    "python": ("function",),
    "subgraph": ("ref",),
    "agent": ("prompt",),
}


def _map_item(ctx: LintContext, item: MapItemNode, where: str) -> None:
    for key in _ITEM_NEEDS[item.kind]:
        if getattr(item, key) is None:
            ctx.report(
                where,
                "incomplete-node",
                f"a map item of kind `{item.kind}` needs `{key}`",
                f"add `{key}:` under `do`",
            )
    if item.kind == "agent" and item.agent is None and item.model is None:
        ctx.report(
            where,
            "incomplete-node",
            "a map item of kind `agent` names neither an `agent` nor a `model`",
            "add `agent: <name in spec.agents>` or `model: <name in spec.models>` under `do`",
        )
    if item.agent is not None:
        _name(ctx, item.agent, "agent", f"{where}/agent")
    if item.model is not None:
        _name(ctx, item.model, "model", f"{where}/model")
    if item.tool is not None:
        _name(ctx, item.tool, "tool", f"{where}/tool")
    for index, tool in enumerate(item.tools):
        _name(ctx, tool, "tool", f"{where}/tools/{index}")
    if item.ref is not None:
        _ref(ctx, item.ref, f"{where}/ref")


def _check_edges(ctx: LintContext) -> None:
    for index, edge in enumerate(ctx.body.edges):
        where = pointer("spec", "edges", index)
        if edge.from_ == END:
            ctx.report(
                f"{where}/from",
                "invalid-edge",
                "an edge cannot leave `END`",
                "remove the edge; `END` finishes the run",
            )
        else:
            _node(ctx, edge.from_, f"{where}/from", allow=(START,))
        for target_pointer, target in edge_targets(edge, where):
            if target == START:
                ctx.report(
                    target_pointer,
                    "invalid-edge",
                    "an edge cannot lead to `START`",
                    "point it at the node that should run next, or at `END`",
                )
            else:
                _node(ctx, target, target_pointer, allow=(END,))


def edge_targets(edge: StaticEdge | SwitchEdge | RouteEdge, where: str) -> list[tuple[str, str]]:
    """(pointer, target) of every node an edge can lead to."""
    if isinstance(edge, StaticEdge):
        return [(f"{where}/to", edge.to)]
    if isinstance(edge, SwitchEdge):
        found = [(f"{where}/switch/{i}/to", case.to) for i, case in enumerate(edge.switch)]
        return [*found, (f"{where}/default", edge.default)]
    found = [(f"{where}/to/{escape_pointer(label)}", target) for label, target in edge.to.items()]
    if edge.default is not None:
        found.append((f"{where}/default", edge.default))
    return found


def _node(ctx: LintContext, name: str, where: str, allow: tuple[str, ...] = ()) -> None:
    if name in ctx.body.nodes or name in allow:
        return
    choices = [*ctx.body.nodes, *allow]
    ctx.report(
        where,
        "unknown-node",
        f"`{name}` is not a node of this spec",
        f"use a node id from spec.nodes{' or ' + ', '.join(allow) if allow else ''}."
        f"{did_you_mean(name, choices)} ({known(ctx.body.nodes)})",
    )


def _check_mcp(ctx: LintContext) -> None:
    """MCP tools name a server of spec.mcp_servers; servers' secrets are declared."""
    servers = ctx.body.mcp_servers
    for name, tool in ctx.body.tools.items():
        if tool.server is not None and tool.server not in servers:
            ctx.report(
                pointer("spec", "tools", name, "server"),
                "unknown-mcp-server",
                f"MCP server `{tool.server}` is not defined in spec.mcp_servers",
                f"define it under spec.mcp_servers, or use an existing one."
                f"{did_you_mean(tool.server, servers)} ({known(servers)})",
            )
    declared = set(ctx.body.secrets)
    for name, server in servers.items():
        _check_as_written(ctx, name, server)
        uses: list[tuple[str, str | int, str]] = [
            ("headers", header, secret) for header, secret in server.headers.items()
        ]
        uses += [("secrets", index, secret) for index, secret in enumerate(server.secrets)]
        for field, key, secret in uses:
            if secret not in declared:
                ctx.report(
                    pointer("spec", "mcp_servers", name, field, key),
                    "undeclared-secret",
                    f"secret `{secret}` is not listed in spec.secrets",
                    f"add `{secret}` to spec.secrets.{did_you_mean(secret, declared)}",
                )


#: Text in a server's ``args``/``env`` that reads like a run's value, not like text.
_LOOKS_PER_RUN = re.compile(r"^(?:input|run)\.[A-Za-z_]\w*$|\$\{|\{\{")


def _check_as_written(ctx: LintContext, name: str, server: McpServerDef) -> None:
    """Warn where an ``args``/``env`` text looks meant as a per-run value."""
    places: list[tuple[str, str | int, object]] = [
        ("args", index, value) for index, value in enumerate(server.args)
    ]
    places += [("env", key, value) for key, value in server.env.items()]
    for field, key, value in places:
        if isinstance(value, str) and _LOOKS_PER_RUN.search(value):
            inner = value.strip("${} ")
            expression = inner if inner.startswith(("input.", "run.")) else "input.<field>"
            ctx.report(
                pointer("spec", "mcp_servers", name, field, key),
                "server-value-as-written",
                f"`{value}` is given to the server as written, the same for every run",
                f"for a value of each run write `{{expr: {expression}}}` (CEL over `input` and "
                "`run`); Plait's own environment is not read: pass a secret with `secrets`. "
                "If the text itself is meant, leave it",
                "warning",
            )


def _name(ctx: LintContext, name: str, what: str, where: str) -> None:
    tables: dict[str, Mapping[str, object]] = {
        "model": ctx.body.models,
        "tool": ctx.body.tools,
        "agent": ctx.body.agents,
    }
    table = tables[what]
    if name in table:
        return
    ctx.report(
        where,
        f"unknown-{what}",
        f"{what} `{name}` is not defined in spec.{what}s",
        f"define it under spec.{what}s, or use an existing one.{did_you_mean(name, table)} "
        f"({known(table)})",
    )


def _ref(ctx: LintContext, ref: str, where: str) -> bool:
    """Check a ``subgraph`` ref; True when it resolves to another spec."""
    chain = _ref_chain(ctx.registry, ref, ctx.loaded.ref)
    if chain is not None:
        path = " -> ".join(f"`{step}`" for step in [ctx.loaded.ref, *chain])
        ctx.report(
            where,
            "recursive-ref",
            f"subgraph refs form a loop: {path}",
            "a graph cannot contain itself; break the loop, or use a bounded cycle of nodes",
        )
        return False
    if ref in ctx.registry:
        return True
    name = ref.partition("@")[0]
    versions = ctx.registry.versions(name)
    have = (
        f"versions of `{name}` found: {', '.join(versions)}"
        if versions
        else f"no spec named `{name}` was found next to this one"
    )
    ctx.report(
        where,
        "unknown-ref",
        f"subgraph `{ref}` is not a loaded spec ({have})",
        "put the child spec in the same folder (or pass it to `plait validate`), "
        "and pin a version it has",
    )
    return False


def _subgraph_refs(spec: LoadedSpec) -> list[str]:
    """The refs a spec's subgraph nodes and map items use."""
    refs = []
    for node in spec.spec.spec.nodes.values():
        if isinstance(node, SubgraphNode):
            refs.append(node.ref)
        elif isinstance(node, MapNode) and node.do.ref is not None:
            refs.append(node.do.ref)
    return refs


def _ref_chain(registry: SpecRegistry, ref: str, target: str) -> list[str] | None:
    """The refs from ``ref`` that lead back to ``target``, or None when none do."""
    todo: list[list[str]] = [[ref]]
    seen: set[str] = set()
    while todo:
        chain = todo.pop()
        current = chain[-1]
        if current == target:
            return chain
        if current in seen or current not in registry:
            continue
        seen.add(current)
        todo.extend([*chain, child] for child in _subgraph_refs(registry.resolve(current)))
    return None


def _child_inputs(ctx: LintContext, node_id: str, node: SubgraphNode) -> None:
    """The keys of a subgraph's ``input`` must be inputs of the child spec."""
    accepted = ctx.registry.resolve(node.ref).spec.spec.input_fields
    for key in node.input:
        if key not in accepted:
            ctx.report(
                node_pointer(node_id, "input", key),
                "unknown-input-field",
                f"`{key}` is not an input of `{node.ref}`",
                f"use one of the child's inputs.{did_you_mean(key, accepted)} ({known(accepted)})",
            )
