"""Tools of the record/replay test: each call leaves a line in $REPLAY_CALLS."""

import json
import os


def _note(name: str, args: dict) -> None:
    with open(os.environ["REPLAY_CALLS"], "a", encoding="utf-8") as calls:
        calls.write(json.dumps({"tool": name, **args}) + "\n")


def lookup_order(order_id: str) -> dict:
    """Read an order."""
    _note("lookup_order", {"order_id": order_id})
    return {"order_id": order_id, "total": 120.0}


def issue_refund(order_id: str, amount: float) -> dict:
    """Pay an order back."""
    _note("issue_refund", {"order_id": order_id, "amount": amount})
    return {"status": "issued", "amount": amount}
