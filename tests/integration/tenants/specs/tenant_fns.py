"""Python tools of the tenant test specs."""

from __future__ import annotations


def down() -> dict[str, str]:
    """An endpoint that is down: every call fails (a failure for its breaker)."""
    raise RuntimeError("the endpoint is down")
