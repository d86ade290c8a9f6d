"""Tools of the secret-leak and audit tests."""

from __future__ import annotations

from typing import Any


def whoami(user: str, secrets: dict[str, str]) -> dict[str, Any]:
    """Echoes the secret back, as a careless tool might."""
    return {
        "user": user,
        "token": secrets["SERVICE_TOKEN"],
        "note": f"auth {secrets['SERVICE_TOKEN']}",
    }


def transfer_funds(account: str, amount: int) -> str:
    """Must never run in these tests."""
    raise AssertionError("transfer_funds ran")


def refund(order: str) -> str:
    """A high-risk action."""
    return f"refunded {order}"
