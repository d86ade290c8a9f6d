"""Retries by error class: what retries, how long it waits, what it announces, repairs."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import jsonschema
import pytest

from plait.engine.errors import NodeError
from plait.engine.governance.breakers import CircuitOpen
from plait.engine.governance.retries import RateLimited, TransientError, backoff_delay, classify
from plait.engine.spec.models import CallRetrySpec
from tests.unit.compiler.helpers import Runner, chain, scripted
from tests.unit.governance.limits.helpers import FNS, events_of, limits_spec, tool_calls

FAST = {"max_attempts": 3, "initial_interval": 0.001, "max_interval": 0.01}


def _http_error(status: int) -> httpx.HTTPStatusError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(status, request=request)
    return httpx.HTTPStatusError(f"{status}", request=request, response=response)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (RateLimited(), "rate_limit"),
        (_http_error(429), "rate_limit"),
        (_http_error(503), "server_error"),
        (TransientError("503"), "server_error"),
        (TimeoutError(), "timeout"),
        (httpx.ReadTimeout("slow"), "timeout"),
        (ConnectionResetError(), "network"),
        (httpx.ConnectError("refused"), "network"),
        (PermissionError("no"), "permission"),
        (_http_error(403), "permission"),
        (_http_error(401), "permission"),
        (ValueError("bad"), "validation"),
        (_http_error(422), "validation"),
        (jsonschema.ValidationError("bad"), "validation"),
        (CircuitOpen("tool:x", 1.0), "circuit_open"),
        (RuntimeError("boom"), "other"),
    ],
)
def test_classify(error: BaseException, expected: str) -> None:
    assert classify(error) == expected


def test_provider_errors_are_classified_by_their_class_names() -> None:
    import openai

    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    limited = openai.RateLimitError(
        "slow down", response=httpx.Response(429, request=request), body=None
    )
    assert classify(limited) == "rate_limit"
    assert classify(openai.APITimeoutError(request=request)) == "timeout"
    assert classify(openai.APIConnectionError(request=request)) == "network"


def test_backoff_is_exponential_capped_and_jittered() -> None:
    plain = CallRetrySpec(initial_interval=0.5, backoff=2, max_interval=3, jitter=False)
    error = RuntimeError()
    assert [backoff_delay(plain, n, error) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    jittered = CallRetrySpec(initial_interval=1, backoff=2, max_interval=30, jitter=True)
    delays = {backoff_delay(jittered, 3, error) for _ in range(50)}
    assert all(2.0 <= d <= 4.0 for d in delays)
    assert len(delays) > 1
    assert backoff_delay(plain, 1, RateLimited(retry_after=2.5)) == 2.5
    assert backoff_delay(plain, 1, RateLimited(retry_after=60)) == 3.0


def _key() -> str:
    return uuid.uuid4().hex


async def test_rate_limited_tool_retries_with_events() -> None:
    key = _key()
    runner = Runner(
        limits_spec(
            {
                "call": {
                    "kind": "tool",
                    "tool": "t",
                    "args": {"key": "input.key", "failures": "2"},
                    "output": "out",
                }
            },
            chain("call"),
            {"key": {}, "out": {}},
            tools={"t": {"function": f"{FNS}:rate_limited", "retry": FAST}},
        )
    )
    events, error = await events_of(runner, {"key": key}, "retry")
    assert error is None
    assert (await runner.state())["out"] == "ok after 3"
    assert [(e["target"], e["attempt"], e["error_class"]) for e in events] == [
        ("tool:t", 1, "rate_limit"),
        ("tool:t", 2, "rate_limit"),
    ]
    assert all(0 < e["delay"] <= 0.01 for e in events)
    assert tool_calls()[key] == 3


async def test_retries_stop_after_max_attempts() -> None:
    key = _key()
    spec = limits_spec(
        {"call": {"kind": "tool", "tool": "t", "args": {"key": "input.key", "failures": "9"}}},
        chain("call"),
        {"key": {}},
        tools={"t": {"function": f"{FNS}:flaky_server", "retry": FAST}},
    )
    events, error = await events_of(Runner(spec), {"key": key}, "retry")
    assert isinstance(error, NodeError)
    assert "TransientError: 503 Service Unavailable" in str(error)
    assert [e["error_class"] for e in events] == ["server_error", "server_error"]
    assert tool_calls()[key] == 3


@pytest.mark.parametrize("function", ["forbidden", "invalid"])
async def test_permission_and_validation_errors_never_retry(function: str) -> None:
    key = _key()
    spec = limits_spec(
        {"call": {"kind": "tool", "tool": "t", "args": {"key": "input.key"}}},
        chain("call"),
        {"key": {}},
        tools={"t": {"function": f"{FNS}:{function}", "retry": FAST}},
    )
    events, error = await events_of(Runner(spec), {"key": key}, "retry")
    assert isinstance(error, NodeError)
    assert events == []
    assert tool_calls()[key] == 1


async def test_without_retry_a_rate_limit_fails_at_once() -> None:
    key = _key()
    spec = limits_spec(
        {"call": {"kind": "tool", "tool": "t", "args": {"key": "input.key", "failures": "1"}}},
        chain("call"),
        {"key": {}},
        tools={"t": {"function": f"{FNS}:rate_limited"}},
    )
    events, error = await events_of(Runner(spec), {"key": key}, "retry")
    assert isinstance(error, NodeError)
    assert events == []
    assert tool_calls()[key] == 1


SCHEMA = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}


def _structured(repairs: int, *replies: dict[str, Any]) -> Any:
    model = {**scripted(*replies), "retry": {"max_attempts": 1, "repair_attempts": repairs}}
    return limits_spec(
        {
            "rate": {
                "kind": "llm",
                "model": "m",
                "prompt": "rate it",
                "schema": SCHEMA,
                "output": "rate",
            }
        },
        chain("rate"),
        {"rate": {}},
        models={"m": model},
    )


async def test_malformed_output_is_repaired_with_the_error_quoted() -> None:
    spec = _structured(
        2,
        {"content": "a score of seven"},
        {"content": '{"score": "seven"}'},
        {"when": "is not of type 'integer'", "data": {"score": 7}},
    )
    runner = Runner(spec)
    events, error = await events_of(runner, {}, "retry")
    assert error is None
    assert (await runner.state())["rate"] == {"score": 7}
    assert [(e["target"], e["attempt"], e["error_class"]) for e in events] == [
        ("model:m", 1, "malformed_output"),
        ("model:m", 2, "malformed_output"),
    ]
    assert "not JSON" in events[0]["error"]
    assert "is not of type 'integer'" in events[1]["error"]


async def test_repairs_are_bounded() -> None:
    spec = _structured(1, {"content": "no json here"})
    events, error = await events_of(Runner(spec), {}, "retry")
    assert isinstance(error, NodeError)
    assert "the model's reply is not JSON" in str(error)
    assert len(events) == 1


async def test_a_step_its_node_retries_is_announced_before_it_waits() -> None:
    key = _key()
    runner = Runner(
        limits_spec(
            {
                "call": {
                    "kind": "tool",
                    "tool": "t",
                    "args": {"key": "input.key", "failures": "1"},
                    "output": "out",
                    # The node's own retry (LangGraph's policy), not the call's.
                    "retry": {"max_attempts": 2, "initial_interval": 0.01, "jitter": False},
                }
            },
            chain("call"),
            {"key": {}, "out": {}},
            tools={"t": {"function": f"{FNS}:flaky_server"}},
        )
    )
    events, error = await events_of(runner, {"key": key}, "retry")
    assert error is None
    assert [(e["target"], e["attempt"], e["error_class"], e["delay"]) for e in events] == [
        ("node:call", 1, "server_error", 0.01)
    ]
    assert tool_calls()[key] == 2
