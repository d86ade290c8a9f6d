"""A run taken over after its worker died stays one trace; step spans keep their journal seqs.

In-process (the worker tests' specs and helpers), with spans going to the
SDK's in-memory exporter.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from plait.engine.store.pool import Pool
from tests.conftest import fresh_database
from tests.integration.killed_runs import worker_dies_mid_node
from tests.integration.server.harness import registered_pool
from tests.integration.server.worker.conftest import (
    SPECS_DIR,
    events_of,
    new_run,
    run_reaches,
    running_worker,
)
from tests.unit.observability.capture import captured_spans

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
async def tpool(postgres_server_url: str) -> AsyncIterator[Pool]:
    """A database of its own (a worker claims any pending run), with the worker specs."""
    with fresh_database(postgres_server_url) as url:
        async with registered_pool(url, SPECS_DIR) as opened:
            yield opened


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    with captured_spans() as exporter:
        yield exporter


def _attr(span: ReadableSpan, name: str) -> object:
    return (span.attributes or {}).get(name)


async def test_a_taken_over_run_is_one_trace(
    tpool: Pool, tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    run = await new_run(
        tpool, "worker-steps", input={"folder": str(tmp_path)}, stream_mode=["updates"]
    )
    trace_id = uuid.UUID(run.run_id).int
    await worker_dies_mid_node(tpool, run.run_id, tmp_path / "two.started")
    (tmp_path / "two.go").touch()
    async with running_worker(tpool, worker_id="worker-b"):
        finished = await run_reaches(tpool, run.run_id, "success", "error")
    assert (finished.status, finished.attempt) == ("success", 2)

    found = [s for s in spans.get_finished_spans() if s.context.trace_id == trace_id]
    roots = sorted(
        (s for s in found if s.name == "run worker-steps"), key=lambda s: s.start_time or 0
    )
    assert [_attr(s, "plait.attempt") for s in roots] == [1, 2]
    assert all(s.parent is None for s in roots)
    assert _attr(roots[1], "plait.run.status") == "success"
    steps = sorted(
        (s for s in found if s.name.startswith("step ")), key=lambda s: s.start_time or 0
    )
    by_attempt = {
        root.context.span_id: [
            (_attr(s, "plait.node"), _attr(s, "plait.step.status"))
            for s in steps
            if s.parent and s.parent.span_id == root.context.span_id
        ]
        for root in roots
    }
    assert by_attempt[roots[0].context.span_id] == [("one", "ok"), ("two", "cancelled")]
    assert by_attempt[roots[1].context.span_id] == [("two", "ok"), ("three", "ok")]

    # The second attempt's metadata event names the trace; every finished step
    # span carries the seq of the journal event with its update.
    events = await events_of(tpool, run.run_id)
    metadata = [e.data for e in events if e.event == "metadata"]
    assert metadata[1] == {"run_id": run.run_id, "attempt": 2, "trace_id": f"{trace_id:032x}"}
    updates = [(node, e.seq) for e in events if e.event == "updates" for node in e.data]
    seqs = [
        (_attr(s, "plait.node"), _attr(s, "plait.journal.seq"))
        for s in steps
        if _attr(s, "plait.step.status") == "ok"
    ]
    assert seqs == updates
