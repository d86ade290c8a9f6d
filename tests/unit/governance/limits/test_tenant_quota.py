"""The engine's tenant quota hook: every step and model call is admitted, and charged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from plait.engine.governance.budgets import QuotaExceeded, with_quota
from tests.unit.compiler.helpers import Runner, chain, scripted
from tests.unit.governance.limits.helpers import limits_spec


class MemoryQuota:
    """A :class:`plait.engine.governance.budgets.TenantQuota` in memory."""

    def __init__(self, **limits: float) -> None:
        self.limits = limits
        self.totals: dict[str, float] = {}
        self.admitted: list[str] = []

    async def admit(self, node: str) -> None:
        self.admitted.append(node)
        used = dict(self.totals)
        used["tokens"] = used.get("input_tokens", 0) + used.get("output_tokens", 0)
        for name, value in self.limits.items():
            if used.get(name, 0) >= value:
                raise QuotaExceeded(node, "acme", f"daily_max_{name}", value, used[name])

    async def charge(self, delta: Mapping[str, float]) -> None:
        for name, value in delta.items():
            self.totals[name] = self.totals.get(name, 0) + value


def _three_steps() -> Any:
    nodes = {
        name: {"kind": "llm", "model": "m", "prompt": "x", "output": name}
        for name in ("first", "second", "third")
    }
    state = {name: {} for name in nodes}
    return limits_spec(nodes, chain(*nodes), state, models={"m": scripted({"content": "ok"})})


def _runner(quota: MemoryQuota) -> Runner:
    runner = Runner(_three_steps())
    with_quota(runner.config, quota)
    return runner


async def test_steps_and_tokens_are_charged() -> None:
    quota = MemoryQuota()
    out = await _runner(quota).start()
    assert out["third"] == "ok"
    assert quota.totals["steps"] == 3
    assert quota.totals["input_tokens"] > 0 and quota.totals["output_tokens"] > 0
    # Each step is admitted before it runs, and each model call before it is made.
    assert quota.admitted == ["first", "model:m", "second", "model:m", "third", "model:m"]


async def test_a_reached_step_limit_stops_the_next_step_before_it_runs() -> None:
    quota = MemoryQuota(steps=2)
    with pytest.raises(QuotaExceeded) as caught:
        await _runner(quota).start()
    assert caught.value.node == "third"
    assert "daily budget daily_max_steps=2 of tenant 'acme' reached (used 2" in str(caught.value)
    assert quota.totals["steps"] == 2
    assert quota.admitted[-1] == "third"


async def test_a_reached_token_limit_stops_the_next_step() -> None:
    quota = MemoryQuota(tokens=1)
    with pytest.raises(QuotaExceeded) as caught:
        await _runner(quota).start()
    assert caught.value.node == "second"
    assert quota.totals["steps"] == 1


async def test_a_reached_token_limit_stops_the_next_model_call_inside_a_step() -> None:
    """An agent's second model call in the same step is refused once the first spent it all."""
    tool_call = {"tool_calls": [{"name": "echo", "args": {"key": "q", "value": "v"}, "id": "c"}]}
    spec = limits_spec(
        {"agent": {"kind": "agent", "model": "m", "tools": ["echo"], "prompt": "go"}},
        chain("agent"),
        {},
        models={"m": scripted(tool_call, {"content": "done"})},
        tools={"echo": {"function": "plait_limits_fns:echo"}},
    )
    quota = MemoryQuota(tokens=1)
    runner = Runner(spec)
    with_quota(runner.config, quota)
    with pytest.raises(QuotaExceeded) as caught:
        await runner.start()
    assert caught.value.node == "model:m"
    assert quota.admitted == ["agent", "model:m", "model:m"]
    assert quota.totals.get("steps", 0) == 0  # a failed step does not count
