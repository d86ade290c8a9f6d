"""Circuit breakers per tool and per model endpoint (``breaker`` on models and tools).

Process-local: each worker process keeps its own view of an endpoint's health,
which is what it can observe. A breaker remembers its calls of the last
``window``; once at least ``min_calls`` of them have failed at
``failure_rate`` or more it **opens**, and calls fail fast with
:class:`CircuitOpen` (never retried) for ``open_for``. Then it is
**half-open**: one probe call goes through (the others still fail fast); a
success closes the breaker, a failure opens it again.

Transitions are announced as ``{"plait": "breaker", "target", "key", "state"}``;
:func:`snapshot` gives every breaker's state (for the server's API).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from plait.engine.observability.emit import emit
from plait.engine.spec.models import BreakerSpec, duration_seconds

State = Literal["closed", "open", "half_open"]


class CircuitOpen(Exception):
    """A call refused because its breaker is open: the callee failed too often just now."""

    def __init__(self, target: str, retry_in: float) -> None:
        super().__init__(
            f"circuit open for {target}: too many recent failures; "
            f"next probe in {max(retry_in, 0.0):.1f}s"
        )
        self.target = target
        self.retry_in = retry_in


@dataclass
class Breaker:
    """One endpoint's breaker; ``clock`` is the registry's (monotonic seconds)."""

    key: str
    spec: BreakerSpec
    clock: Callable[[], float]
    calls: deque[tuple[float, bool]] = field(default_factory=deque)
    state: State = "closed"
    opened_at: float = 0.0
    probing: bool = False

    def _prune(self, now: float) -> None:
        horizon = now - duration_seconds(self.spec.window)
        while self.calls and self.calls[0][0] < horizon:
            self.calls.popleft()

    def before_call(self, target: str) -> None:
        """Let a call through, or raise :class:`CircuitOpen`."""
        now = self.clock()
        if self.state == "closed":
            return
        retry_in = self.opened_at + duration_seconds(self.spec.open_for) - now
        if self.state == "open" and retry_in <= 0:
            self._move("half_open", target)
        if self.state == "half_open" and not self.probing:
            self.probing = True  # this call is the probe
            return
        raise CircuitOpen(target, retry_in)

    def after_call(self, target: str, *, ok: bool) -> None:
        """Record a call's outcome; may open or close the breaker."""
        now = self.clock()
        if self.state == "half_open" and self.probing:
            self.probing = False
            if ok:
                self.calls.clear()
                self._move("closed", target)
            else:
                self.opened_at = now
                self._move("open", target)
            return
        self.calls.append((now, ok))
        self._prune(now)
        failures = sum(1 for _, good in self.calls if not good)
        if (
            self.state == "closed"
            and len(self.calls) >= self.spec.min_calls
            and failures / len(self.calls) >= self.spec.failure_rate
        ):
            self.opened_at = now
            self._move("open", target)

    def abandon(self) -> None:
        """A call ended with no outcome (cancelled): a probe may be tried again."""
        self.probing = False

    def _move(self, state: State, target: str) -> None:
        self.state = state
        emit({"plait": "breaker", "target": target, "key": self.key, "state": state})

    def describe(self) -> dict[str, Any]:
        """The breaker as data: state, calls and failures in the window, when it reopens."""
        now = self.clock()
        self._prune(now)
        failures = sum(1 for _, good in self.calls if not good)
        shown: dict[str, Any] = {
            "state": self.state,
            "calls": len(self.calls),
            "failures": failures,
            "failure_rate": self.spec.failure_rate,
            "min_calls": self.spec.min_calls,
        }
        if self.state == "open":
            shown["probe_in"] = round(
                max(0.0, self.opened_at + duration_seconds(self.spec.open_for) - now), 3
            )
        return shown


class BreakerRegistry:
    """Every breaker of this process, by endpoint key."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._breakers: dict[str, Breaker] = {}
        # Sync tools run in threads, but calls are guarded on the event loop; the
        # lock only keeps creation safe for callers outside it.
        self._lock = threading.Lock()

    def get(self, key: str, spec: BreakerSpec) -> Breaker:
        """The breaker of ``key`` (created with ``spec`` on first use; the latest spec wins)."""
        with self._lock:
            found = self._breakers.get(key)
            if found is None:
                found = Breaker(key, spec, lambda: self.clock())
                self._breakers[key] = found
            found.spec = spec
            return found

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Every breaker's state, by key."""
        with self._lock:
            breakers = list(self._breakers.values())
        return {b.key: b.describe() for b in breakers}

    def clear(self) -> None:
        """Forget every breaker (tests)."""
        with self._lock:
            self._breakers.clear()


REGISTRY = BreakerRegistry()


def breaker_for(key: str, spec: BreakerSpec) -> Breaker:
    """The process's breaker for endpoint ``key``."""
    return REGISTRY.get(key, spec)


def snapshot() -> dict[str, dict[str, Any]]:
    """Every breaker of this process: ``{key: {state, calls, failures, ...}}``."""
    return REGISTRY.snapshot()
