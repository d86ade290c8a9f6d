"""``gated.yaml``'s steps, and its gate files (``tests/integration/cli/specs/gated_steps.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

#: The graph's steps in order (b1 and b2 run in the same step).
STEPS: list[tuple[str, ...]] = [("a",), ("b1", "b2"), ("c",), ("d",)]
NODES = [node for step in STEPS for node in step]


def open_gates(gates: Path, steps: Iterable[tuple[str, ...]]) -> Path:
    """Create the folder ``gates`` with the gates of ``steps`` open; return it."""
    gates.mkdir()
    for step in steps:
        for node in step:
            (gates / node).touch()
    return gates
