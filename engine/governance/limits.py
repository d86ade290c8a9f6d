"""What the compiler adds to a graph for the runtime limits a spec declares.

Only specs that declare a control get its private channel, its per-step
guard or gated edges, so every other spec compiles to exactly the graph it
did before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from plait.engine.governance.budgets import USAGE, Budget, merge_usage, run_metered, stopped
from plait.engine.governance.loops import (
    TOOL_CALLS,
    LoopCounter,
    add_counts,
    start_counting,
    stop_counting,
)
from plait.engine.spec.models import GraphSpec

#: Whether a run has ended early; edges lead to ``END`` once it says so.
Gate = Callable[[Mapping[str, Any]], bool]
Step = Callable[[], Awaitable[dict[str, Any]]]


def governance_channels(spec: GraphSpec) -> dict[str, Any]:
    """Private state channels (name -> annotated type) for the spec's limits."""
    channels: dict[str, Any] = {}
    if spec.spec.budgets is not None:
        channels[USAGE] = Annotated[dict, merge_usage]
    if spec.spec.limits is not None and spec.spec.limits.max_identical_tool_calls is not None:
        channels[TOOL_CALLS] = Annotated[dict, add_counts]
    return channels


def governance_gate(spec: GraphSpec) -> Gate | None:
    """The check every edge makes first, when some limit can end a run early."""
    budgets = spec.spec.budgets
    if budgets is not None and budgets.on_exceed == "return":
        return stopped
    return None


@dataclass(frozen=True)
class StepLimits:
    """The per-step guards of one spec: its budget and its loop limit."""

    budget: Budget | None
    max_identical_tool_calls: int | None

    @classmethod
    def of(cls, spec: GraphSpec) -> StepLimits | None:
        """The guards ``spec`` declares, or ``None`` (the default: nothing to do per step)."""
        budget = Budget.of(spec)
        limits = spec.spec.limits
        loop_limit = limits.max_identical_tool_calls if limits is not None else None
        if budget is None and loop_limit is None:
            return None
        return cls(budget, loop_limit)

    async def run(self, node: str, state: Mapping[str, Any], step: Step) -> dict[str, Any]:
        """Run ``step`` under the guards; its update carries their state deltas."""
        if self.max_identical_tool_calls is None:
            return await self._metered(node, state, step)
        counter = LoopCounter(node, self.max_identical_tool_calls, state.get(TOOL_CALLS) or {})
        token = start_counting(counter)
        try:
            update = await self._metered(node, state, step)
        finally:
            stop_counting(token)
        if counter.delta:
            update[TOOL_CALLS] = counter.delta
        return update

    async def _metered(self, node: str, state: Mapping[str, Any], step: Step) -> dict[str, Any]:
        if self.budget is None:
            return await step()
        return await run_metered(self.budget, node, state, step)
