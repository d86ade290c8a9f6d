"""The tool of the map items record/replay test: each call leaves a line in $REPLAY_CALLS."""

import json
import os


def lookup_order(order_id: str) -> dict:
    """Read an order."""
    with open(os.environ["REPLAY_CALLS"], "a", encoding="utf-8") as calls:
        calls.write(json.dumps({"tool": "lookup_order", "order_id": order_id}) + "\n")
    return {"order_id": order_id, "total": len(order_id)}
