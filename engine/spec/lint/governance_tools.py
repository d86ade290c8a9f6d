"""Lint of the tool-safety fields: compensations, secrets, high-risk and non-idempotent tools."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator

from plait.engine.spec.expressions import ExpressionError, cel_variables
from plait.engine.spec.lint.context import LintContext, did_you_mean, known, node_pointer, pointer
from plait.engine.spec.lint.imports import module_file
from plait.engine.spec.models import Compensation, MapNode, ToolNode, literal_of

#: Modules larger than this are not parsed to check a ``reconcile`` function's shape.
_MAX_SOURCE_BYTES = 1_000_000

#: What a compensation's ``args`` may read: the original call.
_ROOTS = frozenset({"args", "result"})


def _compensations(ctx: LintContext) -> Iterator[tuple[str, Compensation]]:
    for name, tool in ctx.body.tools.items():
        if tool.compensate is not None:
            yield pointer("spec", "tools", name, "compensate"), tool.compensate
    for node_id, node in ctx.body.nodes.items():
        if node.compensate is not None:
            yield node_pointer(node_id, "compensate"), node.compensate


def check_governance_tools(ctx: LintContext) -> None:
    """Compensations name one existing action with valid CEL; secrets are declared."""
    tools = ctx.body.tools
    for where, comp in _compensations(ctx):
        if (comp.function is None) == (comp.tool is None):
            ctx.report(
                where,
                "compensate-form",
                "a compensation names exactly one of `function` and `tool`",
                "write `compensate: {function: module:function}` or "
                "`compensate: {tool: <name>, args: {...}}`",
            )
        if comp.tool is not None and comp.tool not in tools:
            ctx.report(
                f"{where}/tool",
                "unknown-tool",
                f"compensation tool `{comp.tool}` is not defined in spec.tools",
                f"define it or fix the name.{did_you_mean(comp.tool, tools)} ({known(tools)})",
            )
        elif comp.tool is not None and tools[comp.tool].risk == "high":
            ctx.report(
                f"{where}/tool",
                "high-risk-compensation",
                f"compensation tool `{comp.tool}` is high-risk, but compensations run "
                "without an approval",
                "use a tool whose risk is low or medium for the compensation",
                severity="warning",
            )
        for arg, argument in comp.args.items():
            literal, source = literal_of(argument)
            if not literal:
                _check_cel(ctx, f"{where}/args/{arg}", source)
    declared = set(ctx.body.secrets)
    for name, tool in tools.items():
        for index, secret in enumerate(tool.secrets):
            if secret not in declared:
                ctx.report(
                    pointer("spec", "tools", name, "secrets", index),
                    "undeclared-secret",
                    f"secret `{secret}` is not listed in spec.secrets",
                    f"add `{secret}` to spec.secrets (the graph's list of secrets it uses)."
                    f"{did_you_mean(secret, declared)}",
                )
    _check_on_reject(ctx)
    _check_reconcile(ctx)
    for node_id, node in ctx.body.nodes.items():
        if not isinstance(node, MapNode):
            continue
        _check_in_doubt_in_map(ctx, node_id, node)
        _check_approval_in_map(ctx, node_id, node)


def _check_approval_in_map(ctx: LintContext, node_id: str, node: MapNode) -> None:
    """A map's own item calls no high-risk tool: its approval would have to wait."""
    do, body = node.do, ctx.body
    if do.kind == "tool" and do.tool is not None and body.high_risk([do.tool]):
        ctx.report(
            node_pointer(node_id, "do", "tool"),
            "high-risk-in-map",
            f"high-risk tool `{do.tool}` asks for approval inside a map item, "
            "where interrupts are not supported",
            "call it from a `tool` node or an agent instead",
        )
    elif do.kind == "agent" and (risky := body.high_risk(body.agent_tools(do.agent, do.tools))):
        names = ", ".join(f"`{name}`" for name in risky)
        where = ("do", "tools") if do.tools else ("do", "agent")
        ctx.report(
            node_pointer(node_id, *where),
            "high-risk-in-map",
            f"the agent of each item of map `{node_id}` may call high-risk tool {names}, "
            "whose approval would wait inside a map item, where interrupts are not supported",
            f"give the item's agent only tools of low or medium risk, or call {names} from "
            "an `agent` node outside the map",
        )


def _check_reconcile(ctx: LintContext) -> None:
    """``reconcile`` belongs to non-idempotent tools and takes ``(args, key)``."""
    for name, tool in ctx.body.tools.items():
        if tool.reconcile is None:
            continue
        where = pointer("spec", "tools", name, "reconcile")
        if tool.idempotent:
            ctx.report(
                where,
                "reconcile-unused",
                f"tool `{name}` is idempotent, so its calls are never in doubt and "
                "`reconcile` is never called",
                f"set `idempotent: false` on tool `{name}`, or remove `reconcile`",
                severity="warning",
            )
        problem = _reconcile_shape(ctx, tool.reconcile)
        if problem is not None:
            ctx.report(
                where,
                "reconcile-signature",
                f"`{tool.reconcile}` {problem}",
                "define it as `def name(args, key)` (or `async def`): it gets the call's "
                "arguments and idempotency key and returns `{happened: true, result: ...}` "
                "or `{happened: false}`",
            )


def _reconcile_shape(ctx: LintContext, ref: str) -> str | None:
    """What is wrong with the function ``ref`` names, read from its source (nothing runs).

    Only a module beside a spec read from a file is read; a name bound some
    other way (imported, assigned) is left to the check when the tool loads.
    """
    if ctx.loaded.path is None:
        return None
    module, _, function = ref.partition(":")
    source = module_file(module, [str(ctx.loaded.base_dir.resolve()), *sys.path])
    if source is None:
        return None  # `unknown-module` says so, or it is not a source file
    try:
        if source.stat().st_size > _MAX_SOURCE_BYTES:
            return None
        tree = ast.parse(source.read_bytes(), str(source))
    except (OSError, SyntaxError, ValueError):
        return None  # importing it will say what is wrong
    defs = [
        statement
        for statement in tree.body
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
        and statement.name == function
    ]
    if defs:
        # The last definition is the one the module ends with.
        if not _takes_two(defs[-1].args):
            return "must take two positional arguments, (args, key)"
        return None
    if function in _identifiers(tree) or "__getattr__" in _identifiers(tree):
        return None  # bound some other way (imported, assigned): the load checks it
    return f"is not defined in module `{module}` ({source.name})"


def _identifiers(tree: ast.Module) -> set[str]:
    """Every name a module mentions (bound or read), however deep."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
    return names


def _takes_two(arguments: ast.arguments) -> bool:
    """Whether a function with these parameters can be called as ``f(args, key)``."""
    positional = [*arguments.posonlyargs, *arguments.args]
    required = len(positional) - len(arguments.defaults)
    required_keywords = sum(default is None for default in arguments.kw_defaults)
    fits = len(positional) >= 2 or arguments.vararg is not None
    return fits and required <= 2 and required_keywords == 0


def _check_in_doubt_in_map(ctx: LintContext, node_id: str, node: MapNode) -> None:
    """A map item cannot ask a person: its non-idempotent tools want a ``reconcile``."""
    do = node.do
    places: list[tuple[str, str]] = []  # (pointer, tool name)
    if do.tool is not None:
        places.append((node_pointer(node_id, "do", "tool"), do.tool))
    places += [(node_pointer(node_id, "do", "tools", i), name) for i, name in enumerate(do.tools)]
    if not do.tools and do.agent in ctx.body.agents:  # an item agent's own tools
        where = node_pointer(node_id, "do", "agent")
        places += [(where, name) for name in ctx.body.agents[do.agent].tools]
    for where, name in places:
        _warn_in_doubt(ctx, where, name)


def _warn_in_doubt(ctx: LintContext, where: str, tool_name: str) -> None:
    tool = ctx.body.tools.get(tool_name)
    if tool is None or tool.idempotent or tool.reconcile is not None:
        return
    ctx.report(
        where,
        "in-doubt-in-map",
        f"tool `{tool_name}` is not idempotent and has no `reconcile`: inside a map item, "
        "where no one can be asked, a call of it in doubt (its worker died before the "
        "result was recorded) fails its item",
        f"give tool `{tool_name}` a `reconcile` function, or call it from a `tool` node "
        "or an agent",
        severity="warning",
    )


def _check_on_reject(ctx: LintContext) -> None:
    nodes, tools = ctx.body.nodes, ctx.body.tools
    for node_id, node in nodes.items():
        if not isinstance(node, ToolNode) or node.on_reject is None:
            continue
        where = node_pointer(node_id, "on_reject")
        if node.on_reject not in nodes:
            ctx.report(
                where,
                "unknown-node",
                f"`on_reject` names node `{node.on_reject}`, which does not exist",
                f"name a node of spec.nodes.{did_you_mean(node.on_reject, nodes)}",
            )
        if node.tool in tools and tools[node.tool].risk != "high":
            ctx.report(
                where,
                "on-reject-unused",
                f"tool `{node.tool}` is not `risk: high`, so its calls are never rejected",
                f"set `risk: high` on tool `{node.tool}`, or remove `on_reject`",
                severity="warning",
            )


def _check_cel(ctx: LintContext, where: str, source: str) -> None:
    try:
        variables = cel_variables(source)
    except ExpressionError as exc:
        ctx.report(where, "cel-syntax", f"CEL does not parse: {exc.message}", "fix the expression")
        return
    for root in variables:
        if root not in _ROOTS:
            ctx.report(
                where,
                "cel-unknown-root",
                f"`{root}` is not a variable in a compensation (it can read `args`, `result`)",
                "read the original call's `args` or its `result`",
            )
