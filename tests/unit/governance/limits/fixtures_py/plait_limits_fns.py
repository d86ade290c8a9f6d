"""Tools for the runtime-limit tests: each fails in a known error class, counted by key."""

from __future__ import annotations

from collections import Counter

from plait.engine.governance.retries import RateLimited, TransientError

#: Calls per key, so a test can see how often a tool actually ran.
CALLS: Counter[str] = Counter()


def rate_limited(key: str, failures: int) -> str:
    """Rate limited ``failures`` times, then fine."""
    CALLS[key] += 1
    if CALLS[key] <= failures:
        raise RateLimited("429 Too Many Requests")
    return f"ok after {CALLS[key]}"


def flaky_server(key: str, failures: int) -> str:
    """A 503 ``failures`` times, then fine."""
    CALLS[key] += 1
    if CALLS[key] <= failures:
        raise TransientError("503 Service Unavailable")
    return "ok"


def forbidden(key: str) -> str:
    """Always refused."""
    CALLS[key] += 1
    raise PermissionError("403 Forbidden: no access to the ledger")


def invalid(key: str) -> str:
    """Always rejects its input."""
    CALLS[key] += 1
    raise ValueError("amount must be positive")


def echo(key: str, value: str = "") -> str:
    """Returns its argument."""
    CALLS[key] += 1
    return value
