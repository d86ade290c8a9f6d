"""Expense claims for the A2A examples: ``a2a-expense-agent.yaml`` and its caller."""

from __future__ import annotations

import re
from typing import Any

#: Claims at or above this amount need a person's approval.
APPROVAL_AMOUNT = 500.0
_AMOUNT = re.compile(r"(\d+(?:\.\d+)?)")


def read_claim(request: str) -> dict[str, Any]:
    """The claim a sentence describes: its amount (the first number) and its text."""
    match = _AMOUNT.search(request)
    if match is None:
        raise ValueError(f"no amount in the claim {request!r}; say how much, e.g. 'Taxi 42.50'")
    amount = float(match.group(1))
    return {
        "text": request.strip(),
        "amount": amount,
        "needs_approval": amount >= APPROVAL_AMOUNT,
    }


def settle_claim(claim: dict[str, Any], decision: dict[str, Any] | None) -> dict[str, Any]:
    """The verdict on a claim: paid when small or approved, else declined."""
    verdict = "paid"
    comment = None
    if decision is not None:
        comment = decision.get("comment")
        if decision.get("decision") == "reject":
            verdict = "declined"
    return {"verdict": verdict, "amount": claim["amount"], "comment": comment}
