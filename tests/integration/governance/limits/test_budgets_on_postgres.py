"""Budgets through the runner on Postgres: events, an approval, usage that survives resume."""

from __future__ import annotations

import contextlib
import textwrap
from pathlib import Path
from typing import Any

import pytest

from plait.engine.compiler import CompiledSpec, compile_spec
from plait.engine.governance.budgets import read_usage
from plait.engine.run.events import Completed, Custom, Interrupted, RunEvent
from plait.engine.run.runner import new_thread_id, run_graph
from plait.engine.spec.loader import parse_spec
from plait.engine.store.checkpointer import new_checkpointer
from plait.engine.store.pool import Pool

SPEC = """
apiVersion: plait/v1
kind: Graph
metadata: {name: budget-approval, version: "1.0.0"}
spec:
  state:
    a: {}
    b: {}
  models:
    m:
      provider: scripted
      price: {input_per_million: 1, output_per_million: 1}
      script:
        - {content: "hello", usage: {input_tokens: 100, output_tokens: 50}}
  budgets: {max_tokens: 150, on_exceed: approval}
  nodes:
    first: {kind: llm, model: m, prompt: one, output: a}
    second: {kind: llm, model: m, prompt: two, output: b}
  edges:
    - {from: START, to: first}
    - {from: first, to: second}
    - {from: second, to: END}
"""


def _compiled() -> CompiledSpec:
    here = Path(__file__).resolve().parent
    return compile_spec(parse_spec(textwrap.dedent(SPEC), "b.yaml", here / "b.yaml"))


async def _collect(compiled: CompiledSpec, pool: Pool, thread: str, **kw: Any) -> list[RunEvent]:
    async with contextlib.aclosing(run_graph(compiled, pool, thread, **kw)) as stream:
        return [event async for event in stream]


async def test_budget_approval_resume_and_usage(pool: Pool) -> None:
    compiled = _compiled()
    thread = new_thread_id()
    events = await _collect(compiled, pool, thread, input={})
    budget = [e.data for e in events if isinstance(e, Custom) and e.data.get("plait") == "budget"]
    assert budget[0]["usage"]["tokens"] == 150
    assert budget[1]["exceeded"] == "max_tokens"
    parked = events[-1]
    assert isinstance(parked, Interrupted)
    assert parked.payload["action"] == "exceed_budget"
    assert parked.payload["reason"] == "budget max_tokens=150 reached (used 150)"

    events = await _collect(
        compiled, pool, thread, decisions={parked.interrupt_id: {"decision": "approve"}}
    )
    done = events[-1]
    assert isinstance(done, Completed)
    assert done.output == {"a": "hello", "b": "hello"}
    usage = await read_usage(new_checkpointer(pool), {"configurable": {"thread_id": thread}})
    assert usage is not None
    assert (usage["steps"], usage["input_tokens"], usage["output_tokens"]) == (2, 200, 100)
    assert usage["cost"] == pytest.approx(300 / 1e6)
    assert usage["waived"] == ["max_tokens"]
