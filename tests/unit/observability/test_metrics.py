"""Process metrics: breaker states at scrape time, tool outcomes, traces across attempts."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langgraph.errors import GraphInterrupt
from prometheus_client import CollectorRegistry, generate_latest

from plait.engine.governance import breakers
from plait.engine.observability import observe, tracing
from plait.engine.spec.models import BreakerSpec
from plait.server.operations import metrics
from plait.server.operations.metrics import BreakerCollector
from tests.unit.observability.capture import captured_spans, observing


@pytest.fixture
def clean_breakers() -> Iterator[None]:
    breakers.REGISTRY.clear()
    try:
        yield
    finally:
        breakers.REGISTRY.clear()


def test_breaker_state_is_read_at_scrape_time(clean_breakers: None) -> None:
    registry = CollectorRegistry()
    registry.register(BreakerCollector())
    breaker = breakers.breaker_for("model:openai:-:gpt", BreakerSpec(min_calls=2))
    for _ in range(2):
        breaker.after_call("model:gpt", ok=False)
    text = generate_latest(registry).decode()
    assert 'plait_breaker_state{key="model:openai:-:gpt",state="open"} 1.0' in text
    assert 'plait_breaker_state{key="model:openai:-:gpt",state="closed"} 0.0' in text
    assert 'plait_breaker_failures{key="model:openai:-:gpt"} 2.0' in text


def test_tool_outcomes() -> None:
    assert observe.tool_outcome(None) == "success"
    assert observe.tool_outcome(TimeoutError()) == "timeout"
    assert observe.tool_outcome(httpx.ReadTimeout("slow")) == "timeout"
    assert observe.tool_outcome(asyncio.CancelledError()) == "cancelled"
    assert observe.tool_outcome(ValueError("bad")) == "error"


class Tools(observe.Observer):
    """Keeps the tool calls the engine reports."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def tool_called(self, tool: str, outcome: str, seconds: float, reused: bool) -> None:
        self.calls.append((tool, outcome))


def test_a_tool_call_that_parks_the_run_is_not_counted_until_it_ends() -> None:
    with observing(Tools()) as tools:
        # A high-risk call waiting for approval, or an MCP task parking the run.
        with pytest.raises(GraphInterrupt), observe.tool_call("refund", "pay", {}):
            raise GraphInterrupt(())
        assert tools.calls == []
        with observe.tool_call("refund", "pay", {}):
            pass  # the resumed run makes the call
        assert tools.calls == [("refund", "success")]


def test_every_attempt_of_a_run_is_in_the_run_trace() -> None:
    run_id = "0b5e2a4e-7d7c-4d0c-8a1e-3f2b9c1d5e6f"
    with captured_spans() as exporter:
        for attempt in (1, 2):
            with tracing.run_span(
                run_id=run_id, thread_id="t", graph="g", version="1", attempt=attempt
            ):
                pass
        with tracing.run_span(run_id="not-a-uuid", thread_id="t", graph="g", version="1"):
            pass
        first, second, other = exporter.get_finished_spans()
        assert first.context.trace_id == second.context.trace_id == int(run_id.replace("-", ""), 16)
        assert first.context.span_id != second.context.span_id
        assert [(s.attributes or {})["plait.attempt"] for s in (first, second)] == [1, 2]
        assert other.context.trace_id != first.context.trace_id  # random, still valid
        assert tracing.run_trace_id("not-a-uuid") is None
    assert tracing.run_trace_id(run_id) is None  # tracing off: no trace to point at


def test_a_child_process_s_counts_are_summed_with_the_server_s(tmp_path: Path) -> None:
    # What `plait serve --worker-processes` does: a child counts in files (prometheus-
    # client's multiprocess mode), the server adds them to its own registry's.
    graph = f"merged-{uuid.uuid4().hex[:8]}"
    child = (
        "from plait.server.operations import metrics\n"
        f"metrics.run_finished({graph!r}, 'success')\n"
        f"metrics.run_finished({graph!r}, 'success')\n"
    )
    env = dict(os.environ, PROMETHEUS_MULTIPROC_DIR=str(tmp_path))
    subprocess.run([sys.executable, "-c", child], env=env, check=True, timeout=60)
    metrics.run_finished(graph, "success")  # the server's own, in this process

    text = metrics.exposition([], tmp_path).decode()

    assert f'plait_runs_finished_total{{graph="{graph}",outcome="success"}} 3.0' in text
    assert text.count("# TYPE plait_runs_finished_total counter") == 1
    assert text.count("# TYPE plait_sse_streams_open gauge") == 1
