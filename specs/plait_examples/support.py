"""Ticket triage, text cleanup and replies for ``support-subgraph.yaml`` and ``summarize.yaml``."""

from __future__ import annotations

import re
from typing import Any

#: Category -> words that suggest it, checked in this order.
_CATEGORIES: list[tuple[str, tuple[str, ...]]] = [
    ("billing", ("invoice", "charge", "charged", "refund", "payment", "bill")),
    ("outage", ("down", "outage", "unavailable", "error 500", "cannot log in")),
    ("account", ("password", "login", "email", "account")),
]
_URGENT = ("urgent", "asap", "immediately", "twice", "down")


def classify_ticket(text: str) -> dict[str, Any]:
    """Pick a category by keywords and a priority by urgency words."""
    lowered = text.lower()
    category = next(
        (name for name, words in _CATEGORIES if any(word in lowered for word in words)),
        "general",
    )
    urgent = [word for word in _URGENT if word in lowered]
    return {"category": category, "priority": "high" if urgent else "normal", "signals": urgent}


def clean_text(text: str) -> dict[str, Any]:
    """Collapse whitespace, drop greeting and signature lines, split into sentences."""
    lines = [line.strip() for line in text.splitlines()]
    kept = [
        line
        for line in lines
        if line and not re.match(r"^(hi|hello|dear|thanks|thank you|regards|best)\b", line, re.I)
    ]
    body = " ".join(" ".join(kept).split())
    sentences = [part.strip() for part in re.split(r"(?<=[.!?])\s+", body) if part.strip()]
    return {"text": body, "sentences": sentences, "words": len(body.split())}


def draft_reply(customer: str, category: str, priority: str, summary: str) -> str:
    """A reply that restates the problem and says what happens next."""
    team = {"billing": "billing team", "outage": "on-call engineers", "account": "account team"}
    owner = team.get(category, "support team")
    when = "within 2 hours" if priority == "high" else "within 1 business day"
    return (
        f"Hello {customer},\n\n"
        f"Thanks for reaching out. We understand: {summary}\n"
        f"Our {owner} will follow up {when}.\n\n"
        "Plait Support"
    )
