"""Spans and observer figures of a run through the engine (in-memory exporter, no server)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from plait.engine.observability import observe, tracing
from tests.unit.compiler.helpers import Runner, chain, make_spec, scripted
from tests.unit.observability.capture import captured_spans, observing

FNS = "plait_compiler_fns"
RUN_ID = "6f1c3a52-96c4-4c77-9d2b-1f0f5d0c2a11"


class Recorder(observe.Observer):
    """Keeps what the engine reports."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, str, str]] = []
        self.models: list[dict[str, Any]] = []
        self.tools: list[tuple[str, str, bool]] = []

    def step_finished(self, graph: str, node: str, status: str, seconds: float) -> None:
        assert seconds >= 0
        self.steps.append((graph, node, status))

    def model_called(self, model: str, provider: str, **figures: Any) -> None:
        self.models.append({"model": model, "provider": provider, **figures})

    def tool_called(self, tool: str, outcome: str, seconds: float, reused: bool) -> None:
        self.tools.append((tool, outcome, reused))


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    with captured_spans() as exporter:
        yield exporter


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    with observing(Recorder()) as found:
        yield found


def _agent_spec(*replies: dict[str, Any]) -> Any:
    return make_spec(
        {
            "agent": {
                "kind": "agent",
                "agent": "helper",
                "prompt": "Define {{ state.word }}",
                "output": "answer",
            }
        },
        chain("agent"),
        {"word": {}, "answer": {}},
        models={
            "m": {
                **scripted(*replies),
                "price": {"input_per_million": 2.0, "output_per_million": 4.0},
            }
        },
        tools={"lookup": {"function": f"{FNS}:lookup"}, "explode": {"function": f"{FNS}:explode"}},
        agents={"helper": {"model": "m", "tools": ["lookup", "explode"]}},
    )


def _by_name(found: tuple[ReadableSpan, ...], prefix: str) -> list[ReadableSpan]:
    return [span for span in found if span.name.startswith(prefix)]


async def test_a_run_is_one_trace_with_step_model_and_tool_spans(
    spans: InMemorySpanExporter, recorder: Recorder
) -> None:
    spec = _agent_spec(
        {
            "tool_calls": [
                {"name": "lookup", "args": {"query": "plait"}},
                {"name": "explode", "args": {"reason": "x"}},
            ]
        },
        {"content": "A plait is a braid."},
    )
    runner = Runner(spec)
    runner.config["configurable"]["run_id"] = RUN_ID
    runner.config["metadata"]["tenant_id"] = "acme"
    with tracing.run_span(run_id=RUN_ID, thread_id="t", graph=spec.name, version="1.0.0"):
        out = await runner.start({"word": "plait"})
    assert out["answer"] == "A plait is a braid."

    found = spans.get_finished_spans()
    (run,) = _by_name(found, "run ")
    (step,) = _by_name(found, "step agent")
    chats = _by_name(found, "chat ")
    tools = _by_name(found, "execute_tool ")
    # One trace, whose id is the run id; steps under the run, calls under the step.
    assert {span.context.trace_id for span in found} == {int(RUN_ID.replace("-", ""), 16)}
    assert tracing.run_trace_id(RUN_ID) == RUN_ID.replace("-", "")
    assert run.parent is None
    assert step.parent is not None and step.parent.span_id == run.context.span_id
    assert len(chats) == 2 and len(tools) == 2
    assert {span.parent.span_id for span in chats + tools if span.parent} == {step.context.span_id}

    assert step.attributes is not None
    assert step.attributes["plait.node"] == "agent"
    assert step.attributes["plait.run_id"] == RUN_ID
    assert step.attributes["plait.tenant"] == "acme"
    chat = chats[0].attributes or {}
    assert chat["gen_ai.operation.name"] == "chat"
    assert chat["gen_ai.provider.name"] == "scripted"
    assert chat["gen_ai.request.model"] == "m"
    for usage in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"):
        tokens = chat[usage]
        assert isinstance(tokens, int) and tokens > 0
    by_tool = {(span.attributes or {})["gen_ai.tool.name"]: span for span in tools}
    assert (by_tool["lookup"].attributes or {})["gen_ai.operation.name"] == "execute_tool"
    assert by_tool["lookup"].status.status_code == StatusCode.UNSET
    assert by_tool["explode"].status.status_code == StatusCode.ERROR
    assert (by_tool["explode"].attributes or {})["error.type"] == "RuntimeError"

    # The observer got the same figures the metrics are made of.
    assert recorder.steps == [(spec.name, "agent", "ok")]
    assert sorted(recorder.tools) == [("explode", "error", False), ("lookup", "success", False)]
    assert [m["ok"] for m in recorder.models] == [True, True]
    first = recorder.models[0]
    assert first["cost"] == pytest.approx(
        (first["input_tokens"] * 2.0 + first["output_tokens"] * 4.0) / 1e6
    )


async def test_a_failing_step_span_is_an_error_and_is_logged(
    spans: InMemorySpanExporter, recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    spec = make_spec(
        {"boom": {"kind": "tool", "tool": "explode", "args": {"reason": "'bad'"}}},
        chain("boom"),
        tools={"explode": {"function": f"{FNS}:explode"}},
    )
    runner = Runner(spec)
    runner.config["configurable"]["run_id"] = RUN_ID
    with pytest.raises(Exception, match="tool exploded"):
        await runner.start({})
    (step,) = _by_name(spans.get_finished_spans(), "step boom")
    assert step.status.status_code == StatusCode.ERROR
    assert recorder.steps == [(spec.name, "boom", "error")]
    logged = [r for r in caplog.records if r.name == "plait.engine" and "boom" in r.getMessage()]
    assert logged and logged[0].__dict__["plait_run_id"] == RUN_ID


def test_tracing_is_off_unless_configured() -> None:
    assert not tracing.tracing_requested({})
    assert tracing.tracing_requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert tracing.tracing_requested({"PLAIT_TRACING": "1"})
    assert not tracing.tracing_requested(
        {"PLAIT_TRACING": "0", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
    )
    assert not tracing.tracing_requested({"OTEL_TRACES_EXPORTER": "none"})
    assert not tracing.tracing_requested(
        {"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}
    )


def test_the_tenant_is_the_servers_not_what_the_client_wrote() -> None:
    # The server sets plait_tenant from the run's owner; a client's metadata may say anything.
    config = {"metadata": {"tenant_id": "victim", "plait_tenant": "acme"}}
    assert tracing.tenant_of(config) == "acme"
    assert tracing.tenant_of({"metadata": {"tenant_id": "acme"}}) == "acme"  # embedded engine
    assert tracing.tenant_of({}) is None


def test_agent_calls_are_invoke_agent_spans(spans: InMemorySpanExporter) -> None:
    with (
        tracing.run_span(run_id=RUN_ID, thread_id="t", graph="g", version="1"),
        pytest.raises(ConnectionError),
        tracing.agent_call("billing", node="ask", url="http://127.0.0.1:9/a2a") as span,
    ):
        assert span is not None
        raise ConnectionError("refused")
    (call,) = _by_name(spans.get_finished_spans(), "invoke_agent billing")
    attributes = call.attributes or {}
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.agent.name"] == "billing"
    assert attributes["plait.node"] == "ask"
    assert attributes["server.address"] == "127.0.0.1"  # the host, not the URL
    assert call.status.status_code == StatusCode.ERROR


async def test_an_interrupted_step_is_not_an_error(
    spans: InMemorySpanExporter, recorder: Recorder
) -> None:
    spec = make_spec(
        {
            "ask": {
                "kind": "approval",
                "action": "issue_refund",
                "arguments": "{'amount': 30}",
                "reason": "Refund of 30 requested",
                "output": "decision",
            }
        },
        chain("ask"),
        {"decision": {}},
    )
    out = await Runner(spec).start({})
    assert out["__interrupt__"]
    (step,) = _by_name(spans.get_finished_spans(), "step ask")
    assert step.status.status_code == StatusCode.UNSET
    assert (step.attributes or {})["plait.step.status"] == "interrupted"
    assert recorder.steps == [(spec.name, "ask", "interrupted")]
