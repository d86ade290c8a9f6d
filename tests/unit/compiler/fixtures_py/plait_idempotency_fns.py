"""Tools for the idempotency tests: one with a visible side effect, one that crashes once."""

from __future__ import annotations

#: Every call of ``charge``, in order: the side effect a re-run must not repeat.
CHARGES: list[str] = []
#: Keys ``crash_once`` has already crashed for.
CRASHED: set[str] = set()


class Crash(BaseException):
    """Stands for the process dying: nothing in a node catches a ``BaseException``."""


def charge(order: str) -> dict[str, str]:
    """Charge an order (records the call)."""
    CHARGES.append(order)
    return {"receipt": f"r-{order}-{len(CHARGES)}"}


def crash_once(key: str) -> str:
    """Crash the first time it is called for ``key``; answer afterwards."""
    if key not in CRASHED:
        CRASHED.add(key)
        raise Crash(key)
    return f"done {key}"


def charge_or_crash(order: str) -> dict[str, str]:
    """Like ``charge``, but the first call for an order named ``crash`` crashes first."""
    if order == "crash" and order not in CRASHED:
        CRASHED.add(order)
        raise Crash(order)
    return charge(order)
