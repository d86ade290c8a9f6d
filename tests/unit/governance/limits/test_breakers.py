"""Circuit breakers of tools: open on an error rate, fail fast, probe, close or reopen."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from plait.engine.errors import NodeError
from plait.engine.governance import breakers
from plait.engine.governance.breakers import Breaker, CircuitOpen
from plait.engine.spec.models import BreakerSpec
from tests.unit.compiler.helpers import Runner, chain
from tests.unit.governance.limits.helpers import FNS, events_of, limits_spec, tool_calls


class _Clock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Iterator[_Clock]:
    fake = _Clock()
    breakers.REGISTRY.clear()
    breakers.REGISTRY.clock = fake
    yield fake
    breakers.REGISTRY.clock = breakers.time.monotonic
    breakers.REGISTRY.clear()


BREAKER = {"failure_rate": 0.5, "window": 60, "min_calls": 4, "open_for": 10}
KEY = f"tool:{FNS}:flaky_server"


def _spec(**node: Any) -> Any:
    return limits_spec(
        {
            "call": {
                "kind": "tool",
                "tool": "t",
                "args": {"key": "input.key", "failures": "input.failures"},
                "output": "out",
                **node,
            }
        },
        chain("call"),
        {"key": {}, "failures": {}, "out": {}},
        tools={"t": {"function": f"{FNS}:flaky_server", "breaker": BREAKER}},
    )


async def _call(failures: int, **node: Any) -> tuple[list[dict[str, Any]], Exception | None, str]:
    key = uuid.uuid4().hex
    events, error = await events_of(
        Runner(_spec(**node)), {"key": key, "failures": failures}, "breaker"
    )
    return events, error, key


async def test_error_rate_opens_the_breaker_and_calls_fail_fast(clock: _Clock) -> None:
    await _call(0)
    await _call(0)
    await _call(1)
    assert breakers.snapshot()[KEY]["state"] == "closed"  # 1 of 3: under min_calls
    events, error, _ = await _call(1)
    assert [e["state"] for e in events] == ["open"]
    assert breakers.snapshot()[KEY] == {
        "state": "open",
        "calls": 4,
        "failures": 2,
        "failure_rate": 0.5,
        "min_calls": 4,
        "probe_in": 10.0,
    }
    # Fails fast: the tool does not run, and the node's own retry does not retry it.
    events, error, key = await _call(0, retry={"max_attempts": 3, "initial_interval": 0.001})
    assert isinstance(error, NodeError)
    assert isinstance(error.__cause__, CircuitOpen)
    assert not error.transient
    assert tool_calls()[key] == 0


async def test_a_failed_probe_reopens_and_a_good_one_closes(clock: _Clock) -> None:
    for failures in (1, 1, 1, 1):
        await _call(failures)
    assert breakers.snapshot()[KEY]["state"] == "open"
    clock.now += 11
    events, error, _ = await _call(1)
    assert isinstance(error, NodeError)
    assert [e["state"] for e in events] == ["half_open", "open"]
    assert breakers.snapshot()[KEY]["probe_in"] == 10.0
    clock.now += 11
    events, error, _ = await _call(0)
    assert error is None
    assert [e["state"] for e in events] == ["half_open", "closed"]
    assert breakers.snapshot()[KEY]["state"] == "closed"


def test_only_one_probe_at_a_time_and_old_calls_are_forgotten() -> None:
    now = [0.0]
    spec = BreakerSpec(failure_rate=0.5, window=60, min_calls=2, open_for=5)
    breaker = Breaker("k", spec, lambda: now[0])
    breaker.after_call("t", ok=False)
    now[0] = 61.0  # the first failure leaves the window
    breaker.after_call("t", ok=False)
    assert breaker.state == "closed"
    breaker.after_call("t", ok=False)
    assert breaker.state == "open"
    now[0] = 67.0
    breaker.before_call("t")  # the probe
    with pytest.raises(CircuitOpen):
        breaker.before_call("t")
    breaker.abandon()  # the probe was cancelled: another may try
    breaker.before_call("t")
    breaker.after_call("t", ok=True)
    assert breaker.state == "closed"
