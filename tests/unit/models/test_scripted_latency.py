"""The scripted model's simulated ``latency`` (used by bench/load.py to stand in for a provider)."""

from __future__ import annotations

import asyncio
import time

import pytest
from langchain_core.messages import HumanMessage
from pydantic import ValidationError

from plait.engine.models.scripted import ScriptedChatModel
from plait.engine.spec.models import ScriptedResponse

LATENCY = 0.2


def _model(*replies: dict[str, object]) -> ScriptedChatModel:
    return ScriptedChatModel(script=[ScriptedResponse.model_validate(r) for r in replies])


async def test_ainvoke_waits_for_the_chosen_replys_latency() -> None:
    model = _model({"content": "slow", "latency": "200ms"}, {"when": "^quick$", "content": "fast"})
    started = time.monotonic()
    reply = await model.ainvoke([HumanMessage("hello")])
    assert reply.text == "slow"
    assert time.monotonic() - started >= LATENCY
    assert model.latency([HumanMessage("quick")]) == 0.0


async def test_astream_waits_before_the_first_chunk() -> None:
    model = _model({"content": "one two three", "latency": LATENCY})
    started = time.monotonic()
    stream = model.astream([HumanMessage("hello")])
    first = await anext(stream)
    assert time.monotonic() - started >= LATENCY
    rest = [chunk async for chunk in stream]
    assert first.text + "".join(chunk.text for chunk in rest) == "one two three"


def test_invoke_waits_too() -> None:
    model = _model({"content": "slow", "latency": LATENCY})
    started = time.monotonic()
    assert model.invoke([HumanMessage("hello")]).text == "slow"
    assert time.monotonic() - started >= LATENCY


async def test_concurrent_calls_wait_side_by_side() -> None:
    """The async wait does not block the loop: 20 calls take about one latency, not 20."""
    model = _model({"content": "slow", "latency": LATENCY})
    started = time.monotonic()
    replies = await asyncio.gather(*(model.ainvoke([HumanMessage("hi")]) for _ in range(20)))
    assert [r.text for r in replies] == ["slow"] * 20
    assert time.monotonic() - started < 10 * LATENCY


def test_latency_must_be_a_duration() -> None:
    with pytest.raises(ValidationError):
        ScriptedResponse.model_validate({"content": "x", "latency": "soon"})
