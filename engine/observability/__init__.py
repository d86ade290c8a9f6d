"""What a run shows while it runs: custom stream events, traces, tool and model outcomes."""

from plait.engine.observability.observe import Observer, StepSpans, add_observer, collect_step_spans
from plait.engine.observability.roles import agent_role
from plait.engine.observability.tracing import (
    configure_tracing,
    link_to,
    run_span,
    run_trace_id,
    span_ids,
)
from plait.engine.observability.tracing import enabled as tracing_enabled

__all__ = [
    "Observer",
    "StepSpans",
    "add_observer",
    "agent_role",
    "collect_step_spans",
    "configure_tracing",
    "link_to",
    "run_span",
    "run_trace_id",
    "span_ids",
    "tracing_enabled",
]
