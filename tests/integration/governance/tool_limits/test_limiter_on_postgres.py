"""The tool limiter on real Postgres, in one process: what each limit does to calls.

Two limiters on one tenant stand for two workers (the counts are only in
Postgres); each test uses a tenant of its own. Times are the limiter's own
(``time.monotonic`` around the calls); the multi-process proof with a real tool
is tests/integration/server/multiprocess/test_tool_limits.py.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from plait.engine.governance.tool_limits import (
    ToolLimiter,
    ToolLimits,
    ToolLimitTimeout,
    tool_limits,
)
from plait.engine.spec.models import CallLimitsSpec
from plait.engine.store import tool_limits as store
from plait.engine.store.pool import Pool

pytestmark = pytest.mark.postgres


def _limits(key: str, **declared: object) -> ToolLimits:
    limits = tool_limits({key: ("spec.tools.t", CallLimitsSpec.model_validate(declared))})
    assert limits is not None
    return limits


def _pair(pool: Pool, lease: float = 30.0) -> tuple[ToolLimiter, ToolLimiter]:
    tenant = f"t{uuid.uuid4().hex[:12]}"
    return ToolLimiter(pool, tenant, lease_seconds=lease), ToolLimiter(
        pool, tenant, lease_seconds=lease
    )


async def test_calls_in_flight_never_exceed_the_cap_across_limiters(pool: Pool) -> None:
    limits = _limits("tool:m:f", concurrency=3)
    first, second = _pair(pool)
    in_flight, most = 0, 0

    async def call(limiter: ToolLimiter) -> None:
        nonlocal in_flight, most
        async with limiter.turn("t", limits, node="n", run_id=None):
            in_flight += 1
            most = max(most, in_flight)
            await asyncio.sleep(0.01)  # the tool's work
            in_flight -= 1

    await asyncio.gather(*(call(first if i % 2 else second) for i in range(30)))

    assert most == 3
    async with pool.connection() as conn:
        [state] = await store.limit_states(conn, first.tenant)
    assert (state.in_flight, state.waiting, state.concurrency) == (0, 0, 3)


async def test_a_rate_spaces_calls_across_limiters(pool: Pool) -> None:
    limits = _limits("tool:m:g", rate="40/s")
    first, second = _pair(pool)
    starts: list[float] = []

    async def call(limiter: ToolLimiter) -> None:
        async with limiter.turn("t", limits, node="n", run_id=None):
            starts.append(time.monotonic())

    await asyncio.gather(*(call(first if i % 2 else second) for i in range(41)))

    starts.sort()
    achieved = (len(starts) - 1) / (starts[-1] - starts[0])
    # 40 intervals of 25 ms: never faster than the rate (5% for clock reads), and on a
    # noisy 2-core machine not slower than half of it.
    assert 20 <= achieved <= 42, achieved


async def test_a_pause_holds_every_limiter_until_it_ends(pool: Pool) -> None:
    limits = _limits("tool:m:h", concurrency=5)
    first, second = _pair(pool)
    async with first.turn("t", limits, node="n", run_id=None):
        pass  # the key has a row now
    paused_at = time.monotonic()
    await first.pause(limits, 0.5, "RateLimited: slow down")

    async with second.turn("t", limits, node="n", run_id=None):
        started = time.monotonic()

    assert started - paused_at >= 0.45


async def test_a_call_that_cannot_get_a_slot_in_time_fails_naming_the_limit(pool: Pool) -> None:
    limits = _limits("tool:m:i", concurrency=1, wait="300ms")
    first, second = _pair(pool)
    async with first.turn("t", limits, node="n", run_id=None):
        began = time.monotonic()
        with pytest.raises(ToolLimitTimeout) as caught:
            async with second.turn("t", limits, node="n", run_id=None):
                pytest.fail("got a slot the other limiter holds")
        waited = time.monotonic() - began

    assert 0.25 <= waited < 2.0
    message = str(caught.value)
    assert "tool 't'" in message and "all 1 slots (concurrency)" in message, message
    assert "spec.tools.t.limits" in message and "raise `wait`" in message, message


async def test_a_slot_whose_holder_stopped_renewing_frees_itself_after_its_lease(
    pool: Pool,
) -> None:
    limits = _limits("tool:m:j", concurrency=1)
    first, second = _pair(pool, lease=1.0)
    # A worker that took a slot and died: taken, never renewed nor released.
    turn = await store.take(
        pool,
        str(uuid.uuid4()),
        first.tenant,
        limits.limits,
        tool="t",
        run_id=None,
        node="n",
        lease_seconds=1.0,
    )
    assert turn.granted
    taken = time.monotonic()

    async with second.turn("t", limits, node="n", run_id=None):
        got = time.monotonic()

    assert 0.9 <= got - taken < 5.0


async def test_a_call_longer_than_its_lease_keeps_its_slot_by_renewing_it(pool: Pool) -> None:
    limits = _limits("tool:m:k", concurrency=1, wait="1500ms")
    first, second = _pair(pool, lease=0.6)
    holding = asyncio.Event()
    done = asyncio.Event()

    async def long_call() -> None:
        async with first.turn("t", limits, node="n", run_id=None):
            holding.set()
            await done.wait()  # the tool runs for 2.5 leases and more

    task = asyncio.create_task(long_call())
    await holding.wait()
    try:
        with pytest.raises(ToolLimitTimeout):
            async with second.turn("t", limits, node="n", run_id=None):
                pytest.fail("took the slot of a call that renews it")
    finally:
        done.set()
        await task
