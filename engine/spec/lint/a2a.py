"""Lint of A2A: each ``a2a`` node names one agent and declared secrets; exposure fields exist."""

from __future__ import annotations

from plait.engine.spec.lint.context import LintContext, known, node_pointer, pointer
from plait.engine.spec.models import A2aNode


def check_a2a(ctx: LintContext) -> None:
    """``url`` xor ``card``; header secrets are in ``spec.secrets``; ``text_input`` is an input."""
    declared = set(ctx.body.secrets)
    for node_id, node in ctx.body.nodes.items():
        if not isinstance(node, A2aNode):
            continue
        if (node.url is None) == (node.card is None):
            ctx.report(
                node_pointer(node_id),
                "incomplete-node",
                f"a2a node `{node_id}` needs exactly one of `url` and `card`",
                "give the agent's base URL as `url:` or the URL of its card as `card:`",
            )
        for header, secret in node.headers.items():
            if secret not in declared:
                ctx.report(
                    node_pointer(node_id, "headers", header),
                    "undeclared-secret",
                    f"secret `{secret}` is not listed in spec.secrets",
                    f"add `{secret}` to spec.secrets (the graph's list of secrets it uses).",
                )
    exposure = ctx.body.a2a
    text_input = exposure.text_input if exposure is not None else None
    if text_input is None:
        return
    inputs = ctx.body.input_fields
    if text_input not in ctx.body.state:
        ctx.report(
            pointer("spec", "a2a", "text_input"),
            "unknown-state-field",
            f"`{text_input}` is not a field of spec.state",
            "name the state field a message's text fills",
        )
    elif text_input not in inputs:
        # A run refuses fields that are not inputs: every text message would be rejected.
        ctx.report(
            pointer("spec", "a2a", "text_input"),
            "unknown-input-field",
            f"`{text_input}` is not an input of this graph, so a message's text cannot fill it",
            f"add it to spec.input, or name an input field ({known(inputs)})",
        )
