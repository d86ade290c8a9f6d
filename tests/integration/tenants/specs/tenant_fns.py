"""Python tools of the tenant test specs."""

from __future__ import annotations

from pathlib import Path


def down() -> dict[str, str]:
    """An endpoint that is down: every call fails (a failure for its breaker)."""
    raise RuntimeError("the endpoint is down")


def mark(folder: str, label: str) -> str:
    """A side effect a test can look for: the file ``folder/label``."""
    Path(folder, label).write_text("ran", encoding="utf-8")
    return label
