"""OpenTelemetry traces of runs: one trace per run, a span per step, model, tool and agent call.

Tracing is off unless configured, and then costs one global check per step
(``tracer() is None``): the OTel API is never entered. It is on when
``PLAIT_TRACING`` is true, or when the standard OTel variables ask for an
exporter (``OTEL_TRACES_EXPORTER`` other than ``none``,
``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``);
``PLAIT_TRACING=0`` or ``OTEL_SDK_DISABLED=true`` turn it off whatever else
is set. Exporters: ``otlp`` (OTLP/HTTP protobuf, the default) and ``console``.

A run's trace id is its run id (a UUID is 128 bits, as a trace id is), so
every attempt of a run (a crash, a hand-back) lands in the same trace with
nothing stored, and anyone holding a run id can find its trace. Spans follow
the OpenTelemetry GenAI semantic conventions: ``chat {model}``,
``execute_tool {tool}``, ``invoke_agent {agent}``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from langgraph.errors import GraphBubbleUp
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

log = logging.getLogger("plait.tracing")

TRACER_NAME = "plait"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})

#: The trace id the next root span takes (a run's), read by :class:`RunTraceIds`.
_NEXT_TRACE_ID: ContextVar[int | None] = ContextVar("plait_next_trace_id", default=None)


class RunTraceIds(RandomIdGenerator):
    """Random ids, except that a run's root span takes the trace id derived from its run id."""

    def generate_trace_id(self) -> int:
        """The run's trace id while a run span starts, else a random one."""
        wanted = _NEXT_TRACE_ID.get()
        return wanted if wanted else super().generate_trace_id()

    def is_trace_id_random(self) -> bool:
        """Run ids are UUIDs, not necessarily random: the W3C ``random`` flag stays off."""
        return False


class _Tracing:
    """The process's tracing set-up (``tracer`` is ``None`` when tracing is off)."""

    def __init__(self) -> None:
        self.configured = False
        self.tracer: trace.Tracer | None = None
        self.provider: TracerProvider | None = None
        #: Whether run trace ids are derived from run ids (our provider is in use).
        self.derived_ids = False
        #: The provider this module made the global one (set once per process).
        self.installed: TracerProvider | None = None


_STATE = _Tracing()


def tracing_requested(env: Mapping[str, str] | None = None) -> bool:
    """Whether the environment asks for tracing (see the module docstring)."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return False
    plait = env.get("PLAIT_TRACING", "").strip().lower()
    if plait in _FALSE:
        return False
    if plait in _TRUE:
        return True
    exporters = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporters:
        return exporters != "none"
    return bool(
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def _exporters(env: Mapping[str, str]) -> list[SpanExporter]:
    names = [
        name.strip().lower()
        for name in (env.get("OTEL_TRACES_EXPORTER") or "otlp").split(",")
        if name.strip()
    ]
    found: list[SpanExporter] = []
    for name in names:
        if name == "otlp":
            # Imported here: only processes that export pay for the exporter's imports.
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            # Reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS, _TIMEOUT itself.
            found.append(OTLPSpanExporter())
        elif name == "console":
            found.append(ConsoleSpanExporter())
        elif name != "none":
            log.warning("unknown OTEL_TRACES_EXPORTER %r ignored (use otlp or console)", name)
    return found


def configure_tracing(
    exporter: SpanExporter | None = None, *, env: Mapping[str, str] | None = None
) -> bool:
    """Set up tracing from the environment (or with ``exporter``); return whether it is on.

    Called by ``plait serve`` / ``plait worker`` at start, and lazily by the
    first run otherwise. ``exporter`` (tests, embedding) turns tracing on and
    exports synchronously to it. A tracer provider installed by someone else
    (e.g. ``opentelemetry-instrument``) is used as it is; then trace ids are
    random and only the run's metadata tells a run's trace.
    """
    env = os.environ if env is None else env
    _STATE.configured = True
    if exporter is None and not tracing_requested(env):
        _STATE.tracer, _STATE.provider, _STATE.derived_ids = None, None, False
        return False
    current = trace.get_tracer_provider()
    if exporter is None and current is _STATE.installed and _STATE.installed is not None:
        # Ours, installed by an earlier call: the global provider is set only once.
        provider = _STATE.installed
    elif exporter is None and not isinstance(current, trace.ProxyTracerProvider):
        # The program installed its own provider: use it (its ids, its exporters).
        _STATE.tracer, _STATE.provider = current.get_tracer(TRACER_NAME), None
        _STATE.derived_ids = False
        return True
    else:
        attributes = {} if env.get("OTEL_SERVICE_NAME") else {"service.name": "plait"}
        provider = TracerProvider(resource=Resource.create(attributes), id_generator=RunTraceIds())
        if exporter is not None:
            # Tests and embedding: synchronous, and not global (nothing else is affected).
            provider.add_span_processor(SimpleSpanProcessor(exporter))
        else:
            for found in _exporters(env):
                provider.add_span_processor(BatchSpanProcessor(found))
            # Global too, so libraries that trace themselves (FastAPI, the MCP SDK) join in.
            trace.set_tracer_provider(provider)
            _STATE.installed = provider
    _STATE.tracer, _STATE.provider = provider.get_tracer(TRACER_NAME), provider
    _STATE.derived_ids = True
    return True


def tracer() -> trace.Tracer | None:
    """Plait's tracer, or ``None`` when tracing is off (the check every hot path makes)."""
    if not _STATE.configured:
        configure_tracing()
    return _STATE.tracer


def enabled() -> bool:
    """Whether spans are recorded in this process."""
    return tracer() is not None


def run_trace_id(run_id: str) -> str | None:
    """The trace id (32 hex digits) of run ``run_id`` when it is derived from it, else ``None``."""
    if not enabled() or not _STATE.derived_ids:
        return None
    value = _uuid_int(run_id)
    return f"{value:032x}" if value else None


def _uuid_int(run_id: str) -> int | None:
    try:
        return uuid.UUID(run_id).int or None
    except ValueError:
        return None


def span_ids(span: Span | None = None) -> tuple[str, str] | None:
    """``(trace_id, traceparent)`` of ``span`` (default: the current one), or ``None``."""
    span = span if span is not None else trace.get_current_span()
    context = span.get_span_context()
    if not context.is_valid:
        return None
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier, trace.set_span_in_context(span))
    return f"{context.trace_id:032x}", carrier["traceparent"]


def link_to(traceparent: str | None) -> list[Link]:
    """A span link to the span of a W3C ``traceparent`` (none when it is missing or invalid)."""
    if not traceparent:
        return []
    parent = TraceContextTextMapPropagator().extract({"traceparent": traceparent})
    context = trace.get_current_span(parent).get_span_context()
    return [Link(context)] if context.is_valid else []


@contextlib.contextmanager
def run_span(
    *,
    run_id: str,
    thread_id: str,
    graph: str,
    version: str,
    attempt: int = 1,
    tenant: str | None = None,
    links: Sequence[Link] = (),
) -> Iterator[Span | None]:
    """The root span of one attempt of a run, current inside the block (``None`` when off).

    It is a root whatever the caller's context, with the trace id of the run.
    """
    found = tracer()
    if found is None:
        yield None
        return
    attributes: dict[str, Any] = {
        "plait.run_id": run_id,
        "plait.thread_id": thread_id,
        "plait.graph": graph,
        "plait.graph.version": version,
        "plait.attempt": attempt,
    }
    if tenant:
        attributes["plait.tenant"] = tenant
    token = _NEXT_TRACE_ID.set(_uuid_int(run_id))
    try:
        span = found.start_span(
            f"run {graph}",
            context=otel_context.Context(),  # a root: never a child of the caller's span
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=list(links),
        )
    finally:
        _NEXT_TRACE_ID.reset(token)
    with trace.use_span(span, end_on_exit=True, record_exception=True):
        yield span


def start_span(name: str, attributes: Mapping[str, Any]) -> Span | None:
    """A child of the current span (``None`` when tracing is off); the caller ends it."""
    found = tracer()
    if found is None:
        return None
    return found.start_span(name, attributes=dict(attributes))


def fail(span: Span, exc: BaseException) -> None:
    """Mark ``span`` failed by ``exc`` (``error.type`` as the semantic conventions say).

    ``error.type`` names the cause of an error a node wrapped (``ValueError``,
    not ``NodeError``): what failed, as the logs' ``error_code`` does.
    """
    span.record_exception(exc)
    span.set_attribute("error.type", error_type(exc))
    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"[:500]))


def error_type(exc: BaseException) -> str:
    """The type name that says what failed: the cause's, for an error wrapped by a node."""
    cause = exc.__cause__
    return type(cause if cause is not None else exc).__name__


def step_attributes(node: str, graph: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """A step span's attributes: the node, its graph, and the run's ids from ``config``."""
    configurable = config.get("configurable") or {}
    metadata = config.get("metadata") or {}
    attributes: dict[str, Any] = {"plait.node": node, "plait.graph": graph}
    for key, name in (("run_id", "plait.run_id"), ("thread_id", "plait.thread_id")):
        value = configurable.get(key) or metadata.get(key)
        if value:
            attributes[name] = str(value)
    tenant = tenant_of(config)
    if tenant:
        attributes["plait.tenant"] = tenant
    return attributes


def tenant_of(config: Mapping[str, Any]) -> str | None:
    """The run's tenant from its config or metadata, if any.

    ``plait_tenant`` (set by the server from the run's owner) comes first: a
    client's own ``metadata.tenant_id`` must not relabel another tenant's run.
    ``tenant_id`` and ``tenant`` serve programs that embed the engine.
    """
    for section in (config.get("metadata") or {}, config.get("configurable") or {}, config):
        for key in ("plait_tenant", "tenant_id", "tenant"):
            value = section.get(key) if isinstance(section, Mapping) else None
            if isinstance(value, str) and value:
                return value
    return None


def model_attributes(name: str, provider: str, request_model: str | None) -> dict[str, Any]:
    """GenAI attributes of a chat call to the spec's model ``name``."""
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": request_model or name,
        "plait.model": name,
    }


def tool_attributes(tool: str, node: str, call_id: str | None = None) -> dict[str, Any]:
    """GenAI attributes of a tool call."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "plait.node": node,
    }
    if call_id:
        attributes["gen_ai.tool.call.id"] = call_id
    return attributes


@contextlib.contextmanager
def agent_call(
    agent: str, *, node: str | None = None, url: str | None = None, **extra: Any
) -> Iterator[Span | None]:
    """A span ``invoke_agent {agent}`` around a call to a (remote) agent, e.g. an ``a2a`` node.

    Yields the span (``None`` when tracing is off) so the caller can add what
    it learns (``gen_ai.conversation.id``, a task id); an exception marks it
    failed, an interrupt (the remote agent needs input) does not.
    """
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
    }
    if node:
        attributes["plait.node"] = node
    host = urlsplit(url).hostname if url else None
    if host:
        # The host only, as the conventions define it (a URL may carry a token).
        attributes["server.address"] = host
    attributes.update({key: value for key, value in extra.items() if value is not None})
    span = start_span(f"invoke_agent {agent}", attributes)
    if span is None:
        yield None
        return
    with trace.use_span(
        span, end_on_exit=True, record_exception=False, set_status_on_exception=False
    ):
        try:
            yield span
        except GraphBubbleUp:
            # The remote agent asked for input (an approval): the call waits, it did not fail.
            span.set_attribute("plait.interrupted", True)
            raise
        except BaseException as exc:
            fail(span, exc)
            raise
