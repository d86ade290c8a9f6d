"""An MCP server's ``limits`` on Postgres: a 429 from one of its tools pauses all of them.

The demo server's ``fail`` answers an ``is_error`` result with ``status: 429`` and
``retry_after: 1.5``; a run of another tool of the same server, started after
that, waits until the pause ends (a ``tool_waiting`` event with reason
``paused``) and then gets its answer.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest

from plait.engine.compiler import compile_spec
from plait.engine.run.events import Completed, Custom, Failed, RunEvent
from plait.engine.run.runner import new_thread_id, run_graph
from plait.engine.spec.loader import load_spec
from plait.engine.store import tool_limits
from plait.engine.store.pool import Pool

pytestmark = pytest.mark.postgres

SPEC = Path(__file__).resolve().parent / "specs" / "mcp-limited.yaml"


async def _run(pool: Pool, throttle: bool) -> list[RunEvent]:
    compiled = compile_spec(load_spec(SPEC))
    run = run_graph(compiled, pool, new_thread_id(), input={"throttle": throttle})
    async with contextlib.aclosing(run) as events:
        return [event async for event in events]


async def test_a_429_of_one_tool_pauses_every_tool_of_the_server(pool: Pool) -> None:
    throttled = await _run(pool, throttle=True)
    answered_at = time.monotonic()
    assert isinstance(throttled[-1], Failed), throttled[-1]
    async with pool.connection() as conn:
        states = {s.key: s for s in await tool_limits.limit_states(conn, "default")}
    [server] = [
        s
        for s in states.values()
        if s.key.startswith("mcp:python -m plait_examples") and "#" not in s.key
    ]
    # The server's key is paused (all its tools), with the tool's error as the reason.
    assert server.paused_until is not None, server
    assert "slow down" in (server.paused_reason or ""), server

    looked_up = await _run(pool, throttle=False)
    waited = time.monotonic() - answered_at

    assert isinstance(looked_up[-1], Completed), looked_up[-1]
    waits = [
        e.data for e in looked_up if isinstance(e, Custom) and e.data.get("plait") == "tool_waiting"
    ]
    assert [(w["tool"], w["reason"]) for w in waits] == [("lookup_order", "paused")], waits
    assert waited >= 1.4, waited
    tool_key = f"{server.key}#lookup_order"
    async with pool.connection() as conn:
        states = {s.key: s for s in await tool_limits.limit_states(conn, "default")}
    assert (states[tool_key].rate, states[server.key].concurrency) == ("5/s", 2)
