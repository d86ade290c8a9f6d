"""SSE helpers: a failure while streaming becomes an `error` event and then `end`."""

from __future__ import annotations

import asyncio
import json

import pytest
from starlette.types import Message, Scope

from plait.engine.store.pool import open_pool
from plait.server.http.sse import (
    coalesced,
    event_names,
    journal_frame_batches,
    sse_response,
    wanted,
)
from plait.server.queue.journal import JournalListener


async def test_a_broken_journal_ends_the_stream_with_error_then_end(database_url: str) -> None:
    pool = await open_pool(database_url)
    listener = JournalListener(pool)
    await pool.close()  # every read now fails, as when the database goes away
    abandoned: list[bool] = []
    frames = [
        frame
        async for batch in journal_frame_batches(
            listener,
            "00000000-0000-0000-0000-000000000000",
            on_abandon=lambda: abandoned.append(True),
        )
        for frame in batch
    ]
    assert [frame.event for frame in frames] == ["error", "end"]
    error = json.loads(str(frames[0].data))
    assert error["error"] == "PoolClosed"
    assert "Last-Event-ID" in error["message"]
    assert abandoned == []  # the client got a clean end: nothing to cancel


def test_stream_mode_filter() -> None:
    names = event_names(["messages-tuple", "updates"])
    assert wanted("messages", names) and wanted("updates|child:1", names)
    assert wanted("metadata", names) and wanted("end", names) and wanted("error", names)
    assert not wanted("values", names)
    assert wanted("values", event_names(None)) and wanted("values", event_names([]))
    # The two message modes have events of their own: neither lets the other's through.
    assert not wanted("messages/partial", names)
    messages = event_names(["messages"])
    assert wanted("messages/metadata", messages) and wanted("messages/partial|child:1", messages)
    assert wanted("messages/complete", messages) and not wanted("messages", messages)
    # Without values or updates, interrupts still arrive (as `values` events).
    assert wanted("values", messages)


async def test_a_response_whose_frames_never_start_stops_following_its_run(
    database_url: str,
) -> None:
    # A client gone before the first frame: the frames' generator never runs its cleanup.
    pool = await open_pool(database_url)
    try:
        listener = JournalListener(pool)
        followed = listener.follow("a-run")
        frames = journal_frame_batches(listener, "a-run", followed=followed)
        response = sse_response(coalesced(frames), {}, followed)

        async def receive() -> Message:
            await asyncio.Event().wait()  # the disconnect is seen by the failed send
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            raise OSError("the client is gone")

        scope: Scope = {"type": "http", "method": "POST", "path": "/runs/stream", "headers": []}
        with pytest.raises(OSError, match="client is gone"):
            await response(scope, receive, send)
        assert "a-run" not in listener._wakers
    finally:
        await pool.close()
