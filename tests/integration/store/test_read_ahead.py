"""A checkpoint read sent ahead: it answers the saver's first read when that asks for the
same checkpoint, and is dropped, unheard errors included, when nothing takes it."""

from __future__ import annotations

import asyncio
import gc
import uuid
from typing import Any

import pytest

from plait.engine.store import Pool, ReadAhead
from plait.engine.store.checkpointer import StepSaver, new_checkpointer
from tests.integration.store.two_steps import two_steps

pytestmark = pytest.mark.postgres


async def _thread_with_two_steps(pool: Pool) -> tuple[str, Any]:
    """A thread paused before its second node; returns it and its graph (compiled)."""
    compiled = two_steps().compile(checkpointer=new_checkpointer(pool), interrupt_before=["b"])
    thread_id = uuid.uuid4().hex
    await compiled.ainvoke({"steps": []}, {"configurable": {"thread_id": thread_id}})
    return thread_id, compiled


def _config(thread_id: str, **more: str) -> Any:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", **more}}


async def test_the_first_read_is_answered_by_the_read_sent_ahead(pool: Pool) -> None:
    thread_id, compiled = await _thread_with_two_steps(pool)
    ahead = ReadAhead.start(pool, thread_id, None)
    before = await ahead.task
    assert before is not None and before.checkpoint["channel_values"]["steps"] == ["a"]

    # The thread moves on after the read was sent: the saver's first read is that read,
    # the next ones read the table.
    await compiled.ainvoke(None, {"configurable": {"thread_id": thread_id}})
    saver = StepSaver(pool, read_ahead=ahead)
    first = await saver.aget_tuple(_config(thread_id))
    later = await saver.aget_tuple(_config(thread_id))
    assert first is before
    assert later is not None and later.checkpoint["channel_values"]["steps"] == ["a", "b"]


async def test_a_first_read_of_another_checkpoint_is_read_now(pool: Pool) -> None:
    thread_id, compiled = await _thread_with_two_steps(pool)
    other, _ = await _thread_with_two_steps(pool)
    history = [state async for state in compiled.aget_state_history(_config(thread_id))]
    oldest = history[-1].config["configurable"]["checkpoint_id"]

    for asked, expected in (
        (_config(other), None),
        (_config(thread_id, checkpoint_id=oldest), oldest),
    ):
        ahead = ReadAhead.start(pool, thread_id, None)
        read = await StepSaver(pool, read_ahead=ahead).aget_tuple(asked)
        assert read is not None
        assert read.config["configurable"]["thread_id"] == asked["configurable"]["thread_id"]
        if expected is not None:
            assert read.checkpoint["id"] == expected

    # Asked by id, the read ahead of that id answers.
    ahead = ReadAhead.start(pool, thread_id, oldest)
    read = await StepSaver(pool, read_ahead=ahead).aget_tuple(
        _config(thread_id, checkpoint_id=oldest)
    )
    assert read is await ahead.task


async def test_a_read_nothing_took_is_stopped_or_heard(pool: Pool) -> None:
    unheard: list[dict[str, Any]] = []
    # What earlier tests left for the collector (a store's batch task) is reported now,
    # not inside this test's window.
    gc.collect()
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _, context: unheard.append(context))
    try:
        pending = ReadAhead.start(pool, uuid.uuid4().hex, None)
        pending.discard()
        await asyncio.wait({pending.task})
        assert pending.task.cancelled()

        async def refused() -> None:
            raise RuntimeError("the database went away")

        failed = ReadAhead(("t", "", None), asyncio.ensure_future(refused()))
        await asyncio.wait({failed.task})
        failed.discard()
        del failed
        gc.collect()  # a collected task with an error nobody read reports it here
    finally:
        loop.set_exception_handler(None)
    assert unheard == []
