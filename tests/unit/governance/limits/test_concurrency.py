"""Concurrency caps: parallel tool calls of one agent reply, model calls per process."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult

from plait.engine.compiler import model_calls
from plait.engine.compiler.context import CompileContext
from plait.engine.compiler.model_calls import invoke_model, model_call_slot, set_model_call_limit
from plait.engine.tools.python_tools import import_function
from tests.unit.compiler.helpers import Runner, chain, scripted
from tests.unit.governance.limits.helpers import FIXTURES, limits_spec

FNS = "plait_concurrency_fns"


def _peak(key: str) -> int:
    import_function(f"{FNS}:overlap", FIXTURES)
    peaks: Counter[str] = sys.modules[FNS].PEAK
    return peaks[key]


def _agent(key: str, calls: int, limits: dict[str, Any] | None) -> Any:
    reply = {
        "tool_calls": [
            {"name": "overlap", "args": {"key": key, "index": n}, "id": f"c{n}"}
            for n in range(calls)
        ]
    }
    body: dict[str, Any] = {
        "models": {"m": scripted(reply, {"content": "done"})},
        "tools": {"overlap": {"function": f"{FNS}:overlap"}},
    }
    if limits is not None:
        body["limits"] = limits
    return limits_spec(
        {
            "agent": {
                "kind": "agent",
                "model": "m",
                "tools": ["overlap"],
                "prompt": "go",
                "output": "answer",
            }
        },
        chain("agent"),
        {"answer": {}},
        **body,
    )


async def test_parallel_tool_calls_are_capped_per_reply() -> None:
    key = uuid.uuid4().hex
    out = await Runner(_agent(key, 6, {"parallel_tool_calls": 2})).start()
    assert out["answer"] == "done"
    assert _peak(key) == 2


async def test_without_a_cap_all_calls_of_a_reply_run_at_once() -> None:
    key = uuid.uuid4().hex
    await Runner(_agent(key, 6, None)).start()
    assert _peak(key) == 6


@pytest.fixture
def model_cap() -> Iterator[None]:
    """Restore the process's model-call cap after a test changes it."""
    yield
    set_model_call_limit(None)


class _Overlapping(FakeListChatModel):
    """A fake provider whose calls stay in flight a few loop turns, counting overlap."""

    active: int = 0
    peak: int = 0

    async def _agenerate(self, *args: Any, **kwargs: Any) -> ChatResult:
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            for _ in range(20):
                await asyncio.sleep(0)  # hand the loop to the other calls
        finally:
            self.active -= 1
        return await super()._agenerate(*args, **kwargs)


async def test_model_calls_in_flight_are_capped_per_process(model_cap: None) -> None:
    spec = limits_spec(
        {"a": {"kind": "llm", "model": "m", "prompt": "x", "output": "answer"}},
        chain("a"),
        {"answer": {}},
        models={"m": scripted({"content": "unused"})},
    )
    ctx = CompileContext(spec, None)
    fake = _Overlapping(responses=["ok"] * 8)

    async def calls() -> list[BaseMessage]:
        return await asyncio.gather(
            *(
                invoke_model(ctx, "m", [HumanMessage("hi")], model_for=lambda _name, _access: fake)
                for _ in range(8)
            )
        )

    await calls()
    assert fake.peak == 8  # no cap: every call at once
    set_model_call_limit(3)
    fake.peak = 0
    replies = await calls()
    assert fake.peak == 3
    assert [reply.text for reply in replies] == ["ok"] * 8


def test_the_cap_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, model_cap: None
) -> None:
    monkeypatch.setenv(model_calls.MAX_MODEL_CALLS_ENV, "4")
    monkeypatch.setattr(model_calls, "_limit", model_calls._UNSET)
    assert model_calls.model_call_limit() == 4
    monkeypatch.setenv(model_calls.MAX_MODEL_CALLS_ENV, "0")
    monkeypatch.setattr(model_calls, "_limit", model_calls._UNSET)
    with pytest.raises(ValueError, match="at least 1"):
        model_calls.model_call_limit()
    # A bad value is refused on every call, never kept (a kept 0 would block every call).
    with pytest.raises(ValueError, match="at least 1"):
        model_calls.model_call_limit()
    monkeypatch.setenv(model_calls.MAX_MODEL_CALLS_ENV, "eight")
    with pytest.raises(ValueError, match="whole number"):
        model_calls.model_call_limit()


async def test_a_slot_is_given_back_when_a_call_fails(model_cap: None) -> None:
    set_model_call_limit(1)
    with pytest.raises(RuntimeError):
        async with model_call_slot():
            raise RuntimeError("provider down")
    async with asyncio.timeout(5):
        async with model_call_slot():
            pass
