"""Lint of the tool-safety fields: compensations, secrets, high-risk tools."""

from __future__ import annotations

from collections.abc import Iterator

from engine.spec.expressions import ExpressionError, cel_variables
from engine.spec.lint.context import LintContext, did_you_mean, known, node_pointer, pointer
from engine.spec.models import Compensation, MapNode, ToolNode

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
        for arg, source in comp.args.items():
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
    for node_id, node in ctx.body.nodes.items():
        if not isinstance(node, MapNode) or node.do.tool is None:
            continue
        item_tool = tools.get(node.do.tool)
        if item_tool is not None and item_tool.risk == "high":
            ctx.report(
                node_pointer(node_id, "do", "tool"),
                "high-risk-in-map",
                f"high-risk tool `{node.do.tool}` asks for approval inside a map item, "
                "where interrupts are not supported",
                "call it from a `tool` node or an agent instead",
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
