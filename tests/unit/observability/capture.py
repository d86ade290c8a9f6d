"""What the engine reports during a block: its spans, or an observer's calls."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from plait.engine.observability import observe, tracing

ObserverT = TypeVar("ObserverT", bound=observe.Observer)


@contextmanager
def captured_spans() -> Iterator[InMemorySpanExporter]:
    """Tracing on, exporting to memory, for the block; off again after it (the default)."""
    exporter = InMemorySpanExporter()
    tracing.configure_tracing(exporter)
    try:
        yield exporter
    finally:
        tracing.configure_tracing(env={"PLAIT_TRACING": "0"})


@contextmanager
def observing(observer: ObserverT) -> Iterator[ObserverT]:
    """``observer`` hears the engine's reports for the block."""
    observe.add_observer(observer)
    try:
        yield observer
    finally:
        observe.remove_observer(observer)
