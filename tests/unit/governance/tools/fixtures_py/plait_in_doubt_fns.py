"""Tools for the in-doubt tests: a side effect the process can "die" around, and reconcilers."""

from __future__ import annotations

from typing import Any

from langgraph.types import interrupt

#: Every execution of ``send``, in order: the side effect that must not repeat blindly.
EFFECTS: list[str] = []
#: Orders whose next ``send`` dies after its effect, before returning (then removed).
DIE_AFTER: set[str] = set()
#: Orders whose next ``send`` dies before its effect (then removed).
DIE_BEFORE: set[str] = set()
#: Every ``reconcile_send`` call: (args, key).
RECONCILED: list[tuple[dict[str, Any], str]] = []


class Crash(BaseException):
    """Stands for the process dying: nothing in a node catches a ``BaseException``."""


def send(order: str) -> dict[str, Any]:
    """Send ``order`` (appends to ``EFFECTS``); may die before or after the effect."""
    if order in DIE_BEFORE:
        DIE_BEFORE.discard(order)
        raise Crash(f"died before sending {order}")
    EFFECTS.append(order)
    if order in DIE_AFTER:
        DIE_AFTER.discard(order)
        raise Crash(f"died after sending {order}")
    return {"sent": order, "n": len(EFFECTS)}


def reconcile_send(args: dict[str, Any], key: str) -> dict[str, Any]:
    """Whether ``send(order)`` happened: read from the effects, as a real one reads its system."""
    RECONCILED.append((args, key))
    if args["order"] in EFFECTS:
        return {"happened": True, "result": {"sent": args["order"], "reconciled": True}}
    return {"happened": False}


async def reconcile_send_async(args: dict[str, Any], key: str) -> dict[str, Any]:
    """``reconcile_send`` as a coroutine."""
    return reconcile_send(args, key)


def reconcile_garbage(args: dict[str, Any], key: str) -> str:
    """A reconcile that answers neither happened nor not."""
    return "maybe"


def reconcile_one_argument(args: dict[str, Any]) -> dict[str, Any]:
    """The wrong shape: reconcile functions take (args, key)."""
    return {"happened": False}


async def park_once(order: str) -> dict[str, Any]:
    """Park the run the first time (as an MCP task tool does), then act once."""
    answer = interrupt({"kind": "task", "order": order})
    EFFECTS.append(order)
    return {"sent": order, "answer": answer}
