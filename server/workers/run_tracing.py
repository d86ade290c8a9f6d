"""One run attempt as the worker executes it: its trace span, log context and journal seqs.

:func:`observed_attempt` wraps :func:`plait.server.workers.execution.execute_run`. With
tracing on it

- opens the attempt's root span (trace id = the run id, so every attempt of a
  run shares one trace; see :mod:`plait.engine.observability.tracing`);
- links it to the span of the run it resumes, when the run answers an
  approval (``metadata.plait_approval``): a resume is a new run, so a new
  trace, that points back at the parked run's;
- records ``plait_trace_id`` and ``plait_traceparent`` in the run's metadata
  (``GET /threads/{tid}/runs/{rid}`` shows them) and reads the seq the
  attempt's first journal event will get, in one statement;
- counts the events the attempt journals, so each step span gets the
  ``plait.journal.seq`` of the event carrying its update
  (:class:`plait.engine.observability.observe.StepSpans`).

With tracing off it only sets the log context (run, thread, graph, tenant).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import Span, Status, StatusCode

from plait.engine.observability import (
    StepSpans,
    collect_step_spans,
    link_to,
    run_span,
    span_ids,
    tracing_enabled,
)
from plait.engine.store import Pool
from plait.server.approvals import records
from plait.server.operations.logs import log_context
from plait.server.queue.runs import Run, add_run_metadata, get_run

log = logging.getLogger("plait.run")


@dataclass
class RunTrace:
    """What the executor reports to while it journals the attempt's events."""

    span: Span | None = None
    steps: StepSpans | None = None
    trace_id: str | None = None
    #: The error event the attempt journaled, if any: its ``error`` (a type name).
    error_code: str | None = None
    #: A few words on how the attempt ended, for its last log line.
    detail: str | None = None

    def metadata(self, data: dict[str, Any]) -> dict[str, Any]:
        """A ``metadata`` event's data with the run's ``trace_id`` when it is traced."""
        return {**data, "trace_id": self.trace_id} if self.trace_id else data

    def journaled(self, mode: str, namespace: tuple[str, ...], chunk: Any, events: int) -> None:
        """A stream chunk became ``events`` journal events (0: not journaled)."""
        if self.steps is not None:
            self.steps.journaled(mode, namespace, chunk, events)

    def emitted(self) -> None:
        """The executor journaled an event of its own (``metadata``, ``error``)."""
        if self.steps is not None:
            self.steps.journaled("", (), None, 1)

    def ended(self, outcome: str) -> None:
        """Note how the attempt ended on its span (a failed run's span is an error)."""
        if self.span is None:
            return
        self.span.set_attribute("plait.run.status", outcome)
        if outcome in ("error", "timeout", "failed", "dead_lettered"):
            code = self.error_code or outcome
            self.span.set_attribute("error.type", code)
            self.span.set_status(Status(StatusCode.ERROR, code))


@contextlib.asynccontextmanager
async def observed_attempt(run: Run, pool: Pool) -> AsyncIterator[RunTrace]:
    """Trace and log-annotate one attempt of ``run`` (see the module docstring)."""
    # The run's owner, never what a client wrote in its metadata.
    fields = {
        "run_id": run.run_id,
        "thread_id": run.thread_id,
        "graph": run.graph,
        "tenant": run.tenant,
    }
    if not tracing_enabled():
        with log_context(**fields):
            yield RunTrace()
        return
    links = link_to(await _resumed_traceparent(pool, run))
    with run_span(
        run_id=run.run_id,
        thread_id=run.thread_id,
        graph=run.graph,
        version=run.version,
        attempt=run.attempt,
        tenant=run.tenant,
        links=links,
    ) as span:
        ids = span_ids(span)
        trace_id = ids[0] if ids else None
        first_seq = await _record(pool, run, ids)
        steps = StepSpans(first_seq) if first_seq is not None else None
        with log_context(**fields, trace_id=trace_id):
            if steps is None:
                yield RunTrace(span, None, trace_id)
                return
            with collect_step_spans(steps):
                yield RunTrace(span, steps, trace_id)


async def _record(pool: Pool, run: Run, ids: tuple[str, str] | None) -> int | None:
    """Store the trace ids in the run's metadata; the seq of the attempt's first new event.

    Only this worker appends to the run's journal while it holds the run's
    lease, so the events it journals get consecutive seqs from there; an
    attempt that no longer holds it records nothing.
    """
    added = {"plait_trace_id": ids[0], "plait_traceparent": ids[1]} if ids else {}
    return await add_run_metadata(pool, run.run_id, run.attempt, added)


async def _resumed_traceparent(pool: Pool, run: Run) -> str | None:
    """The traceparent of the run that parked on the approval ``run`` answers, if any.

    Only an approval of the run's own thread counts: run metadata can come from
    a client, and a link must not lead into another thread's (or tenant's) trace.
    """
    approval = run.metadata.get("plait_approval")
    if not isinstance(approval, Mapping) or not approval.get("approval_id"):
        return None
    answered = await records.get_approval(pool, str(approval["approval_id"]), tenant=run.tenant)
    if answered is None or answered["thread_id"] != run.thread_id:
        return None
    parked = await get_run(pool, answered["run_id"], run.thread_id, tenant=run.tenant)
    traceparent = None if parked is None else parked.metadata.get("plait_traceparent")
    return traceparent if isinstance(traceparent, str) else None


def log_start(run: Run) -> None:
    """The line that says an attempt starts (and, for a resume, which decision it carries)."""
    approval = run.metadata.get("plait_approval")
    if isinstance(approval, Mapping):
        log.info(
            "approval %s %s by %s: run resumes",
            approval.get("approval_id"),
            approval.get("status"),
            approval.get("decided_by") or "-",
            extra={"plait_status": str(approval.get("status"))},
        )
    log.info(
        "run started (attempt %d, graph %s@%s)",
        run.attempt,
        run.graph,
        run.version,
        extra={"plait_status": "running"},
    )


def log_end(outcome: str, error_code: str | None, detail: str | None = None) -> None:
    """The line that says how an attempt ended (``error_code``: its error's type name;
    ``detail``: a few words more). A dead-lettered run is an error that needs a person."""
    extra: dict[str, Any] = {"plait_status": outcome}
    if error_code:
        extra["plait_error_code"] = error_code
    if outcome == "dead_lettered":
        level = logging.ERROR
    else:
        level = logging.WARNING if outcome in ("error", "timeout") else logging.INFO
    if detail:
        log.log(level, "run ended: %s (%s)", outcome, detail, extra=extra)
    else:
        log.log(level, "run ended: %s", outcome, extra=extra)
