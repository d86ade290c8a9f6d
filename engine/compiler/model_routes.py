"""Which model an agent calls next: the first of its routes whose condition holds.

An agent's ``routes`` map conditions (CEL over ``state``, ``input``, ``run``
and ``usage``) to model tiers, checked before every call of its loop: a
high-risk case can go to the strongest model, a long conversation to one with
a larger context, a cheap first pass to a small one. A budget's ``fallback``
still applies after the route (engine/compiler/model_calls.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from plait.engine.compiler.context import Scope
from plait.engine.errors import NodeError
from plait.engine.governance.budgets import current_meter
from plait.engine.observability.emit import emit
from plait.engine.spec.expressions import ExpressionError, cel_variables, compile_cel, evaluate
from plait.engine.spec.lint.expressions import ROUTE_ROOTS
from plait.engine.spec.models import ModelRoute


@dataclass
class StepUsage:
    """The model calls of one agent step so far (a route's ``usage``)."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, reply: BaseMessage) -> None:
        """Count one reply."""
        self.model_calls += 1
        usage = reply.usage_metadata if isinstance(reply, AIMessage) else None
        if usage:
            self.input_tokens += usage.get("input_tokens", 0)
            self.output_tokens += usage.get("output_tokens", 0)

    def as_root(self) -> dict[str, Any]:
        """``usage`` as a route reads it; ``run_tokens`` from the run's meter when it has one."""
        tokens = self.input_tokens + self.output_tokens
        meter = current_meter()
        run_tokens = meter.totals()["tokens"] if meter is not None else tokens
        return {
            "model_calls": self.model_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "tokens": tokens,
            "run_tokens": run_tokens,
        }


@dataclass
class ModelRouter:
    """Picks the model of each call of one agent node."""

    node_id: str
    default: str
    routes: Sequence[ModelRoute]
    _roots: list[frozenset[str]] = field(init=False)

    def __post_init__(self) -> None:
        for route in self.routes:
            compile_cel(route.when)  # fail at compile time, and warm the cache
        self._roots = [frozenset(cel_variables(route.when)) & ROUTE_ROOTS for route in self.routes]

    def pick(self, scope: Scope, usage: StepUsage, previous: str | None) -> str:
        """The model for the next call; announces a change of model as a ``model_route`` event."""
        chosen, reason = self.default, None
        for route, roots in zip(self.routes, self._roots, strict=True):
            if self._holds(route, roots, scope, usage):
                chosen, reason = route.model, route.when
                break
        if chosen != previous and (reason is not None or previous is not None):
            emit(
                {
                    "plait": "model_route",
                    "node": self.node_id,
                    "model": chosen,
                    "when": reason,  # None: back to the agent's own model
                }
            )
        return chosen

    def _holds(
        self, route: ModelRoute, roots: frozenset[str], scope: Scope, usage: StepUsage
    ) -> bool:
        values = {name: usage.as_root() if name == "usage" else scope.root(name) for name in roots}
        try:
            held = evaluate(route.when, values)
        except ExpressionError as exc:
            raise NodeError(self.node_id, f"route `{route.when}`: {exc.message}") from None
        if not isinstance(held, bool):
            raise NodeError(
                self.node_id,
                f"route `{route.when}` gave {held!r}; a route's `when` must be true or false",
            )
        return held
