"""Runtime limits the schema cannot check alone: budgets and the models they name."""

from __future__ import annotations

from plait.engine.spec.lint.context import LintContext, did_you_mean, known, pointer


def check_budgets(ctx: LintContext) -> None:
    """A budget limits something; a cost needs prices; a fallback names a known model."""
    budgets = ctx.body.budgets
    if budgets is None:
        return
    where = pointer("spec", "budgets")
    limits = (budgets.max_steps, budgets.max_tokens, budgets.max_wall_time, budgets.max_cost)
    if all(limit is None for limit in limits):
        ctx.report(
            where,
            "budget-empty",
            "`budgets` sets no limit, so it never applies",
            "set `max_steps`, `max_tokens`, `max_wall_time` or `max_cost`",
            "warning",
        )
    if budgets.max_cost is not None:
        for name, model in ctx.body.models.items():
            if model.price is None:
                ctx.report(
                    pointer("spec", "models", name),
                    "budget-price-missing",
                    f"`budgets.max_cost` is set but model `{name}` has no `price`, "
                    "so its calls would cost nothing",
                    "add `price: {input_per_million: ..., output_per_million: ...}`",
                )
    fallback = budgets.fallback_model
    if budgets.on_exceed == "fallback" and fallback is None:
        ctx.report(
            f"{where}/on_exceed",
            "budget-fallback-missing",
            "`on_exceed: fallback` needs `fallback_model`",
            "name the cheaper model in `budgets.fallback_model`",
        )
    if fallback is not None and fallback not in ctx.body.models:
        ctx.report(
            f"{where}/fallback_model",
            "budget-fallback-unknown",
            f"`fallback_model` {fallback!r} is not a model of this spec."
            f"{did_you_mean(fallback, ctx.body.models)}",
            f"name a model of `spec.models` ({known(ctx.body.models)})",
        )
    if fallback is not None and budgets.on_exceed != "fallback":
        ctx.report(
            f"{where}/fallback_model",
            "budget-fallback-unused",
            f"`fallback_model` is only used with `on_exceed: fallback` (here: {budgets.on_exceed})",
            "remove `fallback_model`, or set `on_exceed: fallback`",
            "warning",
        )
