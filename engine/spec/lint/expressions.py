"""CEL expressions and prompt templates: they parse, and read only what exists."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from plait.engine.spec.expressions import (
    ExpressionError,
    cel_variables,
    check_template,
    fields_read,
    state_fields_read,
    template_state_fields,
)
from plait.engine.spec.lint.context import LintContext, did_you_mean, known, node_pointer, pointer
from plait.engine.spec.lint.graph import writes_of
from plait.engine.spec.models import (
    A2aNode,
    AgentNode,
    ApprovalNode,
    LlmNode,
    MapNode,
    PerRunValue,
    PythonNode,
    RouteEdge,
    RouterNode,
    SubgraphNode,
    SwitchEdge,
    ToolNode,
    WaitNode,
    literal_of,
)

_BASE = frozenset({"state", "input", "run"})
_WITH_RESULT = _BASE | {"result"}
_IN_MAP = _BASE | {"item", "index"}
_MAP_RESULT = _IN_MAP | {"result"}
#: An agent's model routes: also the step's model usage so far (engine/compiler/model_routes.py).
ROUTE_ROOTS = _BASE | {"usage"}
#: An MCP server's per-run ``args``/``env`` values: a session per distinct value, not per step.
_SERVER = frozenset({"input", "run"})

#: Comprehension macros bind their first argument(s); those names are not roots.
_MACRO = re.compile(
    r"\.\s*(?:all|exists|exists_one|map|filter|sortBy|transformList|transformMap)\s*\(\s*"
    r"([A-Za-z_]\w*)\s*,(?:\s*([A-Za-z_]\w*)\s*,)?"
)


#: What an example's ``expect`` assertions read (engine/run/spec_tests.py).
EXPECT_ROOTS = frozenset({"outcome", "state", "output", "steps", "usage", "error"})


@dataclass(frozen=True)
class CelField:
    """One CEL expression of the spec, where it is, and the roots it may read."""

    source: str
    pointer: str
    roots: frozenset[str]


def cel_fields(ctx: LintContext) -> Iterator[CelField]:
    """Every CEL expression in the spec with the roots allowed there."""
    for node_id, node in ctx.body.nodes.items():
        for field, source in node.writes.items():
            yield CelField(source, node_pointer(node_id, "writes", field), _WITH_RESULT)
        if isinstance(node, ToolNode | PythonNode):
            for name, argument in node.args.items():
                literal, source = literal_of(argument)
                if not literal:
                    yield CelField(source, node_pointer(node_id, "args", name), _BASE)
        elif isinstance(node, RouterNode):
            yield CelField(node.label, node_pointer(node_id, "label"), _BASE)
        elif isinstance(node, ApprovalNode) and node.arguments is not None:
            yield CelField(node.arguments, node_pointer(node_id, "arguments"), _BASE)
        elif isinstance(node, WaitNode) and node.until is not None:
            yield CelField(node.until, node_pointer(node_id, "until"), _BASE)
        elif isinstance(node, A2aNode) and node.data is not None:
            yield CelField(node.data, node_pointer(node_id, "data"), _BASE)
        elif isinstance(node, SubgraphNode):
            for name, source in node.input.items():
                yield CelField(source, node_pointer(node_id, "input", name), _BASE)
        elif isinstance(node, MapNode):
            yield CelField(node.items, node_pointer(node_id, "items"), _BASE)
            for name, argument in node.do.args.items():
                literal, source = literal_of(argument)
                if not literal:
                    yield CelField(source, node_pointer(node_id, "do", "args", name), _IN_MAP)
            for name, source in node.do.input.items():
                yield CelField(source, node_pointer(node_id, "do", "input", name), _IN_MAP)
            if node.do.result is not None:
                yield CelField(node.do.result, node_pointer(node_id, "do", "result"), _MAP_RESULT)
    for name, agent in ctx.body.agents.items():
        for index, route in enumerate(agent.routes):
            where = pointer("spec", "agents", name, "routes", index, "when")
            yield CelField(route.when, where, ROUTE_ROOTS)
    for node_id, node in ctx.body.nodes.items():
        if isinstance(node, AgentNode | LlmNode):
            for index, route in enumerate(node.routes or []):
                where = node_pointer(node_id, "routes", index, "when")
                yield CelField(route.when, where, ROUTE_ROOTS)
    for name, server in ctx.body.mcp_servers.items():
        for index, arg in enumerate(server.args):
            if isinstance(arg, PerRunValue):
                where = pointer("spec", "mcp_servers", name, "args", index, "expr")
                yield CelField(arg.expr, where, _SERVER)
        for key, value in server.env.items():
            if isinstance(value, PerRunValue):
                where = pointer("spec", "mcp_servers", name, "env", key, "expr")
                yield CelField(value.expr, where, _SERVER)
    for index, example in enumerate(ctx.body.examples):
        for number, source in enumerate(example.expect):
            yield CelField(
                source, pointer("spec", "examples", index, "expect", number), EXPECT_ROOTS
            )
    for index, edge in enumerate(ctx.body.edges):
        if isinstance(edge, SwitchEdge):
            for case_index, case in enumerate(edge.switch):
                where = pointer("spec", "edges", index, "switch", case_index, "when")
                yield CelField(case.when, where, _BASE)
        elif isinstance(edge, RouteEdge):
            yield CelField(edge.route, pointer("spec", "edges", index, "route"), _WITH_RESULT)


def check_cel(ctx: LintContext) -> None:
    """CEL parses, reads only allowed roots, and only declared state and input fields."""
    inputs = ctx.body.input_fields
    for field in cel_fields(ctx):
        try:
            variables = cel_variables(field.source)
        except ExpressionError as exc:
            ctx.report(
                field.pointer,
                "cel-syntax",
                f"CEL does not parse: {exc.message}",
                "fix the expression; in YAML, quote it when it contains `: ` or ` #`, and "
                "write text inside it in quotes (`\"'approve'\"`)",
            )
            continue
        bound = {name for match in _MACRO.finditer(field.source) for name in match.groups()}
        for root in variables:
            if root not in field.roots and root not in bound:
                ctx.report(field.pointer, "cel-unknown-root", *_root_problem(root, field.roots))
        for name in sorted(state_fields_read(field.source)):
            if name not in ctx.body.state:
                ctx.report(field.pointer, "unknown-state-field", *_unknown_field(ctx, name))
        for name in sorted(fields_read(field.source, "input")):
            if name not in inputs:
                ctx.report(
                    field.pointer,
                    "unknown-input-field",
                    f"`input.{name}` is not an input of this graph",
                    "use a field listed in spec.input (or declared in spec.state when there "
                    f"is no spec.input).{did_you_mean(name, inputs)} ({known(inputs)})",
                )


def _root_problem(root: str, allowed: frozenset[str]) -> tuple[str, str]:
    names = ", ".join(f"`{name}`" for name in sorted(allowed))
    if root == "result":
        return (
            "`result` is only available in `writes`, `route` and a map's `do.result`",
            f"read the state instead (here: {names})",
        )
    if root in ("item", "index"):
        return f"`{root}` is only available inside a map's `do`", f"use one of {names} here"
    if root == "state" and allowed == _SERVER:
        return (
            "an MCP server's per-run value cannot read `state` (it picks the server's "
            "session for the whole run, not for one step)",
            f"read {names} instead, e.g. `input.<field>`",
        )
    return (
        f"`{root}` is not a variable here (an expression can read {names})",
        f"write `state.{root}` for a state field, or `'{root}'` (quoted inside the expression) "
        "for the text",
    )


def _unknown_field(ctx: LintContext, name: str) -> tuple[str, str]:
    return (
        f"state field `{name}` is not declared in spec.state",
        f"declare it under spec.state (e.g. `{name}: {{type: string}}`), or fix the name."
        f"{did_you_mean(name, ctx.body.state)} ({known(ctx.body.state)})",
    )


def _templates(ctx: LintContext) -> Iterator[tuple[str, str]]:
    for name, agent in ctx.body.agents.items():
        if agent.system is not None:
            yield agent.system, pointer("spec", "agents", name, "system")
    for node_id, node in ctx.body.nodes.items():
        if isinstance(node, AgentNode | LlmNode):
            if node.prompt is not None:
                yield node.prompt, node_pointer(node_id, "prompt")
            if node.system is not None:
                yield node.system, node_pointer(node_id, "system")
        elif isinstance(node, ApprovalNode) and node.reason is not None:
            yield node.reason, node_pointer(node_id, "reason")
        elif isinstance(node, A2aNode):
            for key in ("message", "url", "card"):
                source = getattr(node, key)
                if source is not None:
                    yield source, node_pointer(node_id, key)
        elif isinstance(node, MapNode):
            for key in ("prompt", "system"):
                source = getattr(node.do, key)
                if source is not None:
                    yield source, node_pointer(node_id, "do", key)


def _grader_templates(ctx: LintContext) -> Iterator[tuple[str, str]]:
    if ctx.body.evaluation is None:
        return
    for name, grader in ctx.body.evaluation.graders.items():
        if grader.llm is None:
            continue
        for key in ("prompt", "system"):
            source = getattr(grader.llm, key)
            if source is not None:
                yield source, pointer("spec", "evaluation", "graders", name, "llm", key)


def check_templates(ctx: LintContext) -> None:
    """Templates parse and read only declared state fields; graders' prompts read the run's
    trajectory (``input``, ``output``, ``steps``, ``run``), not ``state``."""
    for source, where in _grader_templates(ctx):
        try:
            check_template(source)
        except ExpressionError as exc:
            ctx.report(
                where,
                "template-syntax",
                f"template does not parse: {exc.message}",
                "fix the Jinja2 syntax: `{{ output.field }}` for values, "
                "`{% for step in steps %}...{% endfor %}` for logic",
            )
            continue
        if template_state_fields(source):
            ctx.report(
                where,
                "grader-reads-state",
                "a grader's prompt sees the finished run, not `state`",
                "read `output.<field>` (the run's final values), `input`, `steps` or `run`",
            )
    for source, where in _templates(ctx):
        try:
            check_template(source)
        except ExpressionError as exc:
            ctx.report(
                where,
                "template-syntax",
                f"template does not parse: {exc.message}",
                "fix the Jinja2 syntax: `{{ state.field }}` for values, "
                "`{% if ... %}...{% endif %}` for logic",
            )
            continue
        for name in sorted(template_state_fields(source)):
            if name not in ctx.body.state:
                ctx.report(where, "unknown-state-field", *_unknown_field(ctx, name))


def check_state_targets(ctx: LintContext) -> None:
    """Every field a node writes, and every input/output field, is declared in spec.state."""
    for node_id, node in ctx.body.nodes.items():
        for field, where in writes_of(node).items():
            if field not in ctx.body.state:
                ctx.report(
                    node_pointer(node_id, *where),
                    "unknown-state-field",
                    f"node `{node_id}` writes `{field}`, which spec.state does not declare",
                    _unknown_field(ctx, field)[1],
                )
    for key in ("input", "output"):
        for index, field in enumerate(getattr(ctx.body, key) or ()):
            if field not in ctx.body.state:
                ctx.report(
                    pointer("spec", key, index), "unknown-state-field", *_unknown_field(ctx, field)
                )
