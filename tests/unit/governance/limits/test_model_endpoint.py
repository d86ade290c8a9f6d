"""A real OpenAI-compatible server on 127.0.0.1 that fails on cue: retries and breakers
of a model endpoint, and budgets counting the usage it reports."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from plait.engine.errors import NodeError
from plait.engine.governance import breakers
from plait.engine.governance.breakers import CircuitOpen
from plait.engine.governance.budgets import read_usage
from tests.unit.compiler.helpers import Runner, chain
from tests.unit.governance.limits.helpers import FNS, events_of, limits_spec, tool_calls

API_KEY = "sk-local-test"


class _Endpoint(BaseHTTPRequestHandler):
    #: Status codes to answer with, in order, before answering 200.
    failures: ClassVar[list[int]] = []
    #: Assistant messages to answer with, in order; then "fine".
    replies: ClassVar[list[dict[str, Any]]] = []
    #: The bodies received.
    bodies: ClassVar[list[dict[str, Any]]] = []
    requests: ClassVar[int] = 0

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests += 1
        self.bodies.append(body)
        if self.failures:
            status = self.failures.pop(0)
            data = json.dumps({"error": {"message": f"status {status}", "type": "x"}}).encode()
            self.send_response(status)
            if status == 429:
                self.send_header("Retry-After", "0")
        else:
            message = (
                self.replies.pop(0) if self.replies else {"role": "assistant", "content": "fine"}
            )
            data = json.dumps(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
                }
            ).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TEST_OPENAI_KEY", API_KEY)
    _Endpoint.failures = []
    _Endpoint.replies = []
    _Endpoint.bodies = []
    _Endpoint.requests = 0
    breakers.REGISTRY.clear()
    yield
    breakers.REGISTRY.clear()


def _spec(base_url: str, **model: Any) -> Any:
    definition = {
        "provider": "openai",
        "model": "test-model",
        "base_url": base_url,
        "api_key_env": "TEST_OPENAI_KEY",
        # The SDK's own retries would hide the 429 from Plait's.
        "params": {"max_retries": 0},
        **model,
    }
    return limits_spec(
        {"ask": {"kind": "llm", "model": "m", "prompt": "hi", "output": "answer"}},
        chain("ask"),
        {"answer": {}},
        models={"m": definition},
    )


RETRY = {"max_attempts": 3, "initial_interval": 0.001, "max_interval": 0.01}


async def test_429_then_200_is_retried(base_url: str) -> None:
    _Endpoint.failures = [429]
    runner = Runner(_spec(base_url, retry=RETRY))
    events, error = await events_of(runner, {}, "retry")
    assert error is None
    assert (await runner.state())["answer"] == "fine"
    assert _Endpoint.requests == 2
    assert [(e["target"], e["attempt"], e["error_class"]) for e in events] == [
        ("model:m", 1, "rate_limit")
    ]
    assert "RateLimitError" in events[0]["error"]


async def test_5xx_retries_but_401_does_not(base_url: str) -> None:
    _Endpoint.failures = [503, 502]
    runner = Runner(_spec(base_url, retry=RETRY))
    events, error = await events_of(runner, {}, "retry")
    assert error is None
    assert [e["error_class"] for e in events] == ["server_error", "server_error"]
    _Endpoint.failures, _Endpoint.requests = [401], 0
    events, error = await events_of(Runner(_spec(base_url, retry=RETRY)), {}, "retry")
    assert isinstance(error, NodeError)
    assert "AuthenticationError" in str(error)
    assert (events, _Endpoint.requests) == ([], 1)


async def test_budget_counts_the_usage_the_endpoint_reports(base_url: str) -> None:
    spec = _spec(base_url, price={"input_per_million": 1000, "output_per_million": 2000})
    body = spec.spec.spec.model_dump(by_alias=True, exclude_none=True)
    spec = limits_spec(
        body["nodes"],
        chain("ask"),
        {"answer": {}},
        models=body["models"],
        budgets={"max_cost": 1},
    )
    runner = Runner(spec)
    await runner.start()
    usage = await read_usage(runner.saver, runner.config)
    assert usage is not None
    assert (usage["input_tokens"], usage["output_tokens"]) == (11, 7)
    assert usage["cost"] == pytest.approx((11 * 1000 + 7 * 2000) / 1e6)


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_breaker_opens_fails_fast_and_a_probe_closes_it(base_url: str) -> None:
    clock = _Clock()
    breakers.REGISTRY.clock = clock
    try:
        breaker = {"failure_rate": 0.5, "window": 60, "min_calls": 2, "open_for": 30}
        spec = _spec(base_url, breaker=breaker)
        _Endpoint.failures = [500, 500]
        for _ in range(2):
            events, error = await events_of(Runner(spec), {}, "breaker")
            assert isinstance(error, NodeError)
            assert "Error code: 500" in str(error)
        assert [e["state"] for e in events] == ["open"]
        key = events[0]["key"]
        assert key == f"model:openai:{base_url}:test-model"
        assert breakers.snapshot()[key]["state"] == "open"

        # Open: refused without a request, as a typed error that is not retried.
        requests = _Endpoint.requests
        _, error = await events_of(Runner(_spec(base_url, breaker=breaker, retry=RETRY)), {}, "x")
        assert isinstance(error, NodeError)
        assert isinstance(error.__cause__, CircuitOpen)
        assert "circuit open for model:m" in str(error)
        assert _Endpoint.requests == requests

        # After open_for, one probe goes through; its success closes the breaker.
        clock.now += 31
        runner = Runner(spec)
        events, error = await events_of(runner, {}, "breaker")
        assert error is None
        assert [e["state"] for e in events] == ["half_open", "closed"]
        assert breakers.snapshot()[key] == {
            "state": "closed",
            "calls": 0,
            "failures": 0,
            "failure_rate": 0.5,
            "min_calls": 2,
        }
    finally:
        breakers.REGISTRY.clock = breakers.time.monotonic


def _tool_call(arguments: str) -> dict[str, Any]:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "echo", "arguments": arguments},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _agent(base_url: str, repairs: int) -> Any:
    spec = _spec(base_url, retry={"max_attempts": 1, "repair_attempts": repairs})
    body = spec.spec.spec.model_dump(by_alias=True, exclude_none=True)
    return limits_spec(
        {
            "ask": {
                "kind": "agent",
                "model": "m",
                "tools": ["echo"],
                "prompt": "go",
                "output": "answer",
            }
        },
        chain("ask"),
        {"answer": {}},
        models=body["models"],
        tools={"echo": {"function": f"{FNS}:echo"}},
    )


async def test_unparsable_tool_call_arguments_are_repaired(base_url: str) -> None:
    key = uuid.uuid4().hex
    _Endpoint.replies = [
        _tool_call('{"key": "' + key + '", '),
        _tool_call(json.dumps({"key": key, "value": "v"})),
        {"role": "assistant", "content": "done"},
    ]
    runner = Runner(_agent(base_url, 1))
    events, error = await events_of(runner, {}, "retry")
    assert error is None
    assert (await runner.state())["answer"] == "done"
    assert [(e["target"], e["attempt"], e["error_class"]) for e in events] == [
        ("model:m", 1, "malformed_output")
    ]
    answer = _Endpoint.bodies[1]["messages"][-1]
    assert answer["role"] == "tool" and answer["tool_call_id"] == "call_1"
    assert "arguments are not valid JSON" in answer["content"]
    assert tool_calls()[key] == 1


async def test_tool_call_repairs_are_bounded(base_url: str) -> None:
    _Endpoint.replies = [_tool_call("{broken"), _tool_call("{still broken")]
    events, error = await events_of(Runner(_agent(base_url, 1)), {}, "retry")
    assert isinstance(error, NodeError)
    assert "arguments are not valid JSON" in str(error)
    assert "(after 1 repairs)" in str(error)
    assert len(events) == 1
