"""What a run's stream says about its state: map items lost, a call backing off to retry.

The ``map`` node announces items it lost (``{"plait": "map_lost", node, task,
items, lost}``) and :mod:`plait.engine.governance.retries` each retry
(``{"plait": "retry", target, attempt, delay, ...}``) on LangGraph's custom
stream. :class:`RunMarks` reads them from the driver's items, for ``plait run``
and the server's workers alike, and gives the state and detail of
:mod:`plait.engine.run.states` they imply.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from plait.engine.run.driver import Item
from plait.engine.run.states import RunState, losses_only, settled_state, with_losses


class RunMarks:
    """The marks one run's items left; starts from the losses of its earlier attempts."""

    def __init__(self, detail: Mapping[str, Any] | None = None) -> None:
        # Keyed by the map's task (its checkpoint namespace): a step LangGraph
        # retries announces its losses again, and counts once.
        self._maps: dict[str, dict[str, Any]] = {
            str(entry.get("task") or entry.get("node")): dict(entry)
            for entry in losses_only(detail).get("maps", [])
        }
        self._retry: dict[str, Any] | None = None
        self._retry_until = 0.0

    def observe(self, item: Item) -> bool:
        """Take in one stream item; whether it changed the run's state or detail."""
        namespace, mode, chunk = item
        if mode != "custom" or not isinstance(chunk, Mapping):
            return False
        kind = chunk.get("plait")
        if kind == "map_lost" and not namespace:
            # Top-level maps only: a subgraph's stream reaches a worker only when the
            # client asked for subgraphs, and the outcome must not depend on that.
            key = str(chunk.get("task") or chunk.get("node"))
            self._maps[key] = {
                "node": chunk.get("node"),
                "task": key,
                "items": int(chunk.get("items", 0)),
                "lost": int(chunk.get("lost", 0)),
            }
            return True
        if kind == "retry":
            delay = float(chunk.get("delay") or 0.0)
            if delay <= 0:
                return False  # a repair asks again at once: nothing to wait for
            self._retry = {
                "reason": "call",
                "target": chunk.get("target"),
                "attempt": chunk.get("attempt"),
                "error_class": chunk.get("error_class"),
                "delay": delay,
            }
            self._retry_until = time.monotonic() + delay
            return True
        return False

    def retry_left(self) -> float:
        """Seconds the latest retry still backs off (0: none waits)."""
        return max(0.0, self._retry_until - time.monotonic())

    def live(self) -> tuple[RunState, dict[str, Any] | None]:
        """The state of the run while it executes: ``retrying`` while a call backs off."""
        detail = self.losses()
        if self._retry is not None and self.retry_left() > 0:
            return "retrying", {**(detail or {}), "retry": self._retry}
        return "running", detail

    def losses(self) -> dict[str, Any] | None:
        """The detail of the items lost so far (``None``: none lost)."""
        return with_losses(None, list(self._maps.values())) or None

    def ended(self) -> RunState:
        """What the run counts as when it reached its end."""
        return settled_state(self.losses())
