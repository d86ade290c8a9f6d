"""Lint of secret names: Plait's own settings are never a secret (``secret-reserved``)."""

from __future__ import annotations

from plait.engine.spec.lint.context import LintContext
from plait.engine.spec.secret_refs import RESERVED_PREFIX, is_reserved, secret_refs


def check_secret_names(ctx: LintContext) -> None:
    """No place names a ``PLAIT_*`` variable as a secret."""
    for ref in secret_refs(ctx.body):
        if is_reserved(ref.name):
            ctx.report(
                ref.pointer,
                "secret-reserved",
                f"`{ref.name}` is one of Plait's own settings ({RESERVED_PREFIX}*), "
                "which no spec can read",
                "name a secret of your own (an operator grants it to your tenant, or "
                "exports it for `plait run`)",
            )
