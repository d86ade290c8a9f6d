"""Orders and refunds: the assessment and the high-risk action of ``refund-approval.yaml``."""

from __future__ import annotations

import hashlib
from typing import Any

#: Orders of the demo shop: id -> customer, total paid, amount already refunded.
ORDERS: dict[str, dict[str, Any]] = {
    "A-1001": {"customer": "ada@example.com", "total": 40.0, "refunded": 0.0},
    "A-1002": {"customer": "grace@example.com", "total": 240.0, "refunded": 0.0},
    "A-1003": {"customer": "linus@example.com", "total": 95.0, "refunded": 30.0},
}

#: Refunds at or above this amount, or above this share of the order, need a person.
HIGH_RISK_AMOUNT = 100.0
HIGH_RISK_SHARE = 0.5


def _order(order_id: str) -> dict[str, Any]:
    order = ORDERS.get(order_id)
    if order is None:
        raise LookupError(f"no order {order_id!r}")
    return order


def assess_refund(order_id: str, amount: float, reason: str) -> dict[str, Any]:
    """Check a refund request against the order and rate its risk (``low`` or ``high``)."""
    order = _order(order_id)
    refundable = order["total"] - order["refunded"]
    if amount <= 0 or amount > refundable:
        raise ValueError(f"order {order_id} can be refunded between 0 and {refundable:.2f}")
    reasons = []
    if amount >= HIGH_RISK_AMOUNT:
        reasons.append(f"amount {amount:.2f} is at least {HIGH_RISK_AMOUNT:.2f}")
    if amount > HIGH_RISK_SHARE * order["total"]:
        reasons.append(f"more than {HIGH_RISK_SHARE:.0%} of the order total {order['total']:.2f}")
    return {
        "order_id": order_id,
        "customer": order["customer"],
        "amount": amount,
        "reason": reason,
        "risk": "high" if reasons else "low",
        "reasons": reasons,
    }


def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
    """Issue a refund; the refund id is derived from the order and amount (idempotent)."""
    order = _order(order_id)
    refundable = order["total"] - order["refunded"]
    if amount <= 0 or amount > refundable:
        raise ValueError(f"order {order_id} can be refunded between 0 and {refundable:.2f}")
    digest = hashlib.sha256(f"{order_id}:{amount:.2f}".encode()).hexdigest()[:10]
    return {
        "refund_id": f"rf-{digest}",
        "order_id": order_id,
        "customer": order["customer"],
        "amount": round(amount, 2),
        "status": "issued",
    }


def decline_refund(order_id: str, comment: str | None) -> dict[str, Any]:
    """The customer-facing record of a declined refund."""
    order = _order(order_id)
    note = comment or "the request did not meet the refund policy"
    return {
        "order_id": order_id,
        "customer": order["customer"],
        "status": "declined",
        "message": f"Your refund for order {order_id} was declined: {note}.",
    }


def grade_refund(trajectory: dict[str, Any]) -> dict[str, Any]:
    """Evaluation grader: did the run refund what was agreed, or decline with a reason?

    It reads the run's trajectory (``GET .../trajectory``): 1.0 for a refund of the
    approved amount or a declined one with a message, 0.5 for a refund of a different
    amount, 0.0 for a run that ended with neither.
    """
    output = trajectory.get("output") or {}
    refund = output.get("refund") or {}
    if refund.get("status") == "declined":
        return {"score": 1.0 if refund.get("message") else 0.0, "reason": "declined"}
    if refund.get("status") != "issued":
        return {"score": 0.0, "reason": "neither refunded nor declined"}
    decision = output.get("decision") or {}
    agreed = (decision.get("arguments") or {}).get("amount") or output.get("assessment", {}).get(
        "amount"
    )
    if agreed is None or abs(refund["amount"] - agreed) < 0.005:
        return {"score": 1.0, "reason": f"refunded {refund['amount']:.2f} as agreed"}
    return {"score": 0.5, "reason": f"refunded {refund['amount']:.2f}, agreed {agreed:.2f}"}
