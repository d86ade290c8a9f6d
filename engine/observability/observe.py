"""What the engine tells observers about steps, model calls and tool calls.

The engine knows nothing of Prometheus or HTTP: it measures each step, model
call and tool call, traces it (:mod:`plait.engine.observability.tracing`), logs the
failures on the stdlib logger ``plait.engine``, and hands the figures to the
:class:`Observer` objects registered with :func:`add_observer` (the server
registers one that keeps its Prometheus metrics). With no observer and
tracing off, :func:`watching` is false and node runners skip all of it.

Step spans and the journal: a step's span ends when its node returns, but the
journal ``seq`` of the event that carries its update is known only later, to
whoever journals the stream (the server's executor). When a :class:`StepSpans`
is current (:func:`collect_step_spans`), finished step spans of the root graph
are parked there with their end time, and the journaling side ends them with
``plait.journal.seq`` set (:meth:`StepSpans.journaled`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar

from langgraph.errors import GraphBubbleUp
from opentelemetry import trace
from opentelemetry.trace import Span

from plait.engine.observability import tracing
from plait.engine.spec.models import ModelPrice

log = logging.getLogger("plait.engine")
T = TypeVar("T")

#: Outcomes of a tool call as metrics count them.
ToolOutcome = str  # "success" | "timeout" | "error" | "cancelled"


def top_level_step(config: Mapping[str, Any]) -> bool:
    """Whether ``config`` is a step of the run's own graph, not of a subgraph inside a node.

    A subgraph's steps are the enclosing node's one step (as in spec budgets).
    """
    return "|" not in str((config.get("configurable") or {}).get("checkpoint_ns") or "")


class Observer:
    """Receives the engine's measurements; override what you need (every method is a no-op).

    Methods run on the event loop (or a node's thread) in the hot path: keep them cheap.
    """

    def step_finished(self, graph: str, node: str, status: str, seconds: float) -> None:
        """A step ended: ``status`` is ``ok``, ``error``, ``interrupted`` or ``cancelled``."""

    def model_called(
        self,
        model: str,
        provider: str,
        *,
        ok: bool,
        seconds: float,
        input_tokens: int,
        output_tokens: int,
        cost: float | None,
    ) -> None:
        """A chat call ended; tokens are the reply's ``usage_metadata`` (0 when absent)."""

    def tool_called(self, tool: str, outcome: ToolOutcome, seconds: float, reused: bool) -> None:
        """A tool call ended: ``success``, ``timeout``, ``error`` or ``cancelled``."""

    def policy_refused(self, node: str, tool: str, reason: str) -> None:
        """A call was refused by policy (an allowlist) and not executed."""

    def tool_waited(self, tool: str, reason: str, seconds: float, granted: bool) -> None:
        """A call waited for its turn under a tool's ``limits`` (``reason``: what held it)."""


_OBSERVERS: list[Observer] = []


def add_observer(observer: Observer) -> None:
    """Register ``observer`` for this process (idempotent)."""
    if observer not in _OBSERVERS:
        _OBSERVERS.append(observer)


def remove_observer(observer: Observer) -> None:
    """Stop telling ``observer``."""
    if observer in _OBSERVERS:
        _OBSERVERS.remove(observer)


def watching() -> bool:
    """Whether anyone listens: an observer is registered or tracing is on."""
    return bool(_OBSERVERS) or tracing.tracer() is not None


# --- steps -------------------------------------------------------------------


class StepSpans:
    """Step spans waiting for the journal ``seq`` of the event that carries their update.

    One per run attempt, made by the journaling side, which calls
    :meth:`journaled` for every stream chunk it journals, in order.
    ``first_seq`` is the seq the attempt's first journaled event gets.
    """

    def __init__(self, first_seq: int) -> None:
        self.next_seq = first_seq
        self._parked: dict[str, deque[tuple[Span, int]]] = {}
        # Steps whose update was not journaled (e.g. only ``values`` streamed):
        # they take the seq of the next event journaled.
        self._waiting: list[tuple[Span, int]] = []

    def park(self, node: str, span: Span, end_ns: int) -> None:
        """Keep ``span`` (of a finished root step) until its update is journaled."""
        self._parked.setdefault(node, deque()).append((span, end_ns))

    def journaled(self, mode: str, namespace: tuple[str, ...], chunk: Any, events: int) -> None:
        """A stream chunk was journaled as ``events`` events (0: not journaled)."""
        first = self.next_seq
        self.next_seq += events
        if events and self._waiting:
            for span, end_ns in self._waiting:
                _end(span, end_ns, first)
            self._waiting.clear()
        if mode != "updates" or namespace or not isinstance(chunk, Mapping):
            return
        for node in chunk:
            queue = self._parked.get(node)
            if not queue:
                continue
            span, end_ns = queue.popleft()
            if events:
                _end(span, end_ns, first)
            else:
                self._waiting.append((span, end_ns))

    def close(self) -> None:
        """End what is left (the run ended before its updates were journaled), without a seq."""
        for queue in self._parked.values():
            for span, end_ns in queue:
                span.end(end_time=end_ns)
        for span, end_ns in self._waiting:
            span.end(end_time=end_ns)
        self._parked.clear()
        self._waiting.clear()


def _end(span: Span, end_ns: int, seq: int) -> None:
    span.set_attribute("plait.journal.seq", seq)
    span.end(end_time=end_ns)


_STEP_SPANS: ContextVar[StepSpans | None] = ContextVar("plait_step_spans", default=None)


@contextlib.contextmanager
def collect_step_spans(spans: StepSpans) -> Iterator[StepSpans]:
    """Make ``spans`` where the steps run in this context park their spans."""
    token = _STEP_SPANS.set(spans)
    try:
        yield spans
    finally:
        _STEP_SPANS.reset(token)
        spans.close()


async def observed_step(
    node: str,
    graph: str,
    config: Mapping[str, Any],
    step: Callable[[], Awaitable[T]],
) -> T:
    """Run ``step`` (one node's work) traced and measured."""
    span = (
        tracing.start_span(f"step {node}", tracing.step_attributes(node, graph, config))
        if tracing.tracer() is not None
        else None
    )
    started = time.perf_counter()
    status = "ok"
    try:
        if span is None:
            return await step()
        with trace.use_span(
            span, end_on_exit=False, record_exception=False, set_status_on_exception=False
        ):
            return await step()
    except GraphBubbleUp:
        # An interrupt (approval) or a run stopped by its budget: not a failure.
        status = "interrupted"
        raise
    except BaseException as exc:
        # CancelledError: the run was cancelled or timed out around the step.
        status = "error" if isinstance(exc, Exception) else "cancelled"
        _failed(span, exc, config, "step", node, {"plait_node": node, "plait_graph": graph})
        raise
    finally:
        seconds = time.perf_counter() - started
        for observer in _OBSERVERS:
            observer.step_finished(graph, node, status, seconds)
        if span is not None:
            span.set_attribute("plait.step.status", status)
            parked = _STEP_SPANS.get()
            if status == "ok" and parked is not None and top_level_step(config):
                parked.park(node, span, time.time_ns())
            else:
                span.end()


def _failed(
    span: Span | None,
    exc: BaseException,
    config: Mapping[str, Any],
    what: str,
    name: str,
    fields: dict[str, Any],
) -> None:
    """Mark ``span`` failed; log an error (not a cancellation) with the run's fields."""
    if span is not None:
        tracing.fail(span, exc)
    if isinstance(exc, Exception):
        log.warning(
            "%s %s failed: %s",
            what,
            name,
            exc,
            extra={
                **fields,
                "plait_status": "error",
                "plait_error_code": tracing.error_type(exc),
                **_run_fields(config),
            },
        )


def _run_fields(config: Mapping[str, Any]) -> dict[str, Any]:
    """Log fields naming the run of a step (from its LangGraph config)."""
    configurable = config.get("configurable") or {}
    fields: dict[str, Any] = {}
    for key in ("run_id", "thread_id"):
        if configurable.get(key):
            fields[f"plait_{key}"] = str(configurable[key])
    tenant = tracing.tenant_of(config)
    if tenant:
        fields["plait_tenant"] = tenant
    return fields


# --- model calls -------------------------------------------------------------


class ModelCall:
    """One chat call being observed: call :meth:`reply` with the model's answer."""

    def __init__(
        self, name: str, provider: str, request_model: str | None, price: ModelPrice | None
    ) -> None:
        self.name = name
        self.provider = provider
        self.price = price
        self.span = tracing.start_span(
            f"chat {request_model or name}",
            tracing.model_attributes(name, provider, request_model),
        )
        self.input_tokens = 0
        self.output_tokens = 0

    def reply(self, message: Any) -> None:
        """Record the reply's token usage (``usage_metadata``) and response model."""
        usage = getattr(message, "usage_metadata", None) or {}
        self.input_tokens = int(usage.get("input_tokens") or 0)
        self.output_tokens = int(usage.get("output_tokens") or 0)
        if self.span is not None:
            self.span.set_attribute("gen_ai.usage.input_tokens", self.input_tokens)
            self.span.set_attribute("gen_ai.usage.output_tokens", self.output_tokens)
            response = getattr(message, "response_metadata", None) or {}
            model_name = response.get("model_name") or response.get("model")
            if isinstance(model_name, str):
                self.span.set_attribute("gen_ai.response.model", model_name)

    def cost(self) -> float | None:
        """The call's cost from the model's ``price`` (per million tokens), if it has one."""
        if self.price is None:
            return None
        return self.price.cost(self.input_tokens, self.output_tokens)


@contextlib.contextmanager
def model_call(
    name: str, provider: str, request_model: str | None = None, price: ModelPrice | None = None
) -> Iterator[ModelCall | None]:
    """Observe one chat call to the spec's model ``name`` (``None`` when nobody watches)."""
    if not watching():
        yield None
        return
    call = ModelCall(name, provider, request_model, price)
    started = time.perf_counter()
    ok = True
    try:
        if call.span is None:
            yield call
        else:
            with trace.use_span(
                call.span, end_on_exit=False, record_exception=False, set_status_on_exception=False
            ):
                yield call
    except BaseException as exc:
        ok = False
        if call.span is not None:
            tracing.fail(call.span, exc)
        raise
    finally:
        if call.span is not None:
            call.span.end()
        seconds = time.perf_counter() - started
        for observer in _OBSERVERS:
            observer.model_called(
                name,
                provider,
                ok=ok,
                seconds=seconds,
                input_tokens=call.input_tokens,
                output_tokens=call.output_tokens,
                cost=call.cost(),
            )


# --- tool calls --------------------------------------------------------------


def tool_outcome(exc: BaseException | None) -> ToolOutcome:
    """How a tool call ended, for metrics: ``success``, ``timeout``, ``error``, ``cancelled``."""
    if exc is None:
        return "success"
    if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
        return "timeout"
    if not isinstance(exc, Exception):
        return "cancelled"  # CancelledError: an item timeout or a cancelled run
    return "error"


@contextlib.contextmanager
def tool_call(
    tool: str,
    node: str,
    config: Mapping[str, Any],
    *,
    call_id: str | None = None,
    reused: bool = False,
) -> Iterator[Span | None]:
    """Observe one tool call (the span, when tracing is on, is yielded)."""
    if not watching():
        yield None
        return
    span = tracing.start_span(f"execute_tool {tool}", tracing.tool_attributes(tool, node, call_id))
    if span is not None and reused:
        span.set_attribute("plait.tool.reused", True)
    started = time.perf_counter()
    failure: BaseException | None = None
    interrupted = False
    try:
        if span is None:
            yield None
        else:
            with trace.use_span(
                span, end_on_exit=False, record_exception=False, set_status_on_exception=False
            ):
                yield span
    except GraphBubbleUp:
        # An approval of a high-risk call, or a parked task: not an outcome yet.
        # The call is made (and counted) when the run resumes.
        interrupted = True
        if span is not None:
            span.set_attribute("plait.interrupted", True)
        raise
    except BaseException as exc:
        failure = exc
        _failed(span, exc, config, "tool", tool, {"plait_node": node, "plait_tool": tool})
        raise
    finally:
        if span is not None:
            span.end()
        if not interrupted:
            outcome = tool_outcome(failure)
            seconds = time.perf_counter() - started
            for observer in _OBSERVERS:
                observer.tool_called(tool, outcome, seconds, reused)


def policy_refused(config: Mapping[str, Any], *, node: str, tool: str, reason: str) -> None:
    """Log and count a call refused by policy (call it where the refusal is decided)."""
    log.warning(
        "policy refused tool %s in node %s: %s",
        tool,
        node,
        reason,
        extra={
            "plait_node": node,
            "plait_tool": tool,
            "plait_status": "refused",
            "plait_error_code": "policy_refused",
            **_run_fields(config),
        },
    )
    span = trace.get_current_span()
    if span.is_recording():
        span.add_event("plait.policy_refused", {"gen_ai.tool.name": tool, "plait.reason": reason})
    for observer in _OBSERVERS:
        observer.policy_refused(node, tool, reason)


def tool_waited(tool: str, reason: str, seconds: float, *, granted: bool) -> None:
    """Tell observers that a call waited ``seconds`` for its turn (and whether it got it)."""
    for observer in _OBSERVERS:
        observer.tool_waited(tool, reason, seconds, granted)
