"""A run's journal as a Server-Sent Events response (sse-starlette).

Every journal event becomes one frame ``event: <name>`` / ``data: <json>`` /
``id: <seq>``, so a client that reconnects with ``Last-Event-ID`` gets the
rest of the run, none twice. sse-starlette sends a keep-alive comment every
15 s. A failure after the 200 cannot change the status code, so it is sent as
an ``error`` event followed by ``end``: the client always sees a clean end.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Sequence
from typing import Any

import orjson
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.types import Receive, Scope, Send

from plait.engine.observability import run_trace_id
from plait.server.operations.metrics import SSE_STREAMS
from plait.server.queue.journal import Followed, JournalEvent, JournalListener

logger = logging.getLogger("plait.server")

KEEP_ALIVE_SECONDS = 15
#: Sent whatever stream modes the client asked for.
_ALWAYS = frozenset({"metadata", "error", "end"})
#: Stream modes whose events have other names.
_MODE_EVENTS = {
    "messages-tuple": ("messages",),
    "messages": ("messages/metadata", "messages/partial", "messages/complete"),
}


def event_names(stream_modes: Iterable[str] | None) -> frozenset[str] | None:
    """The event names a client asked for with ``stream_mode`` (None: every event)."""
    if stream_modes is None:
        return None
    modes = list(stream_modes)
    if not modes:
        return None
    names = _ALWAYS | {name for mode in modes for name in _MODE_EVENTS.get(mode, (mode,))}
    if not {"values", "updates"} & names:
        # Such a run journals its interrupts as `values` events, as the Agent
        # Server sends them (server/queue/stream_events.py): they must get through.
        names |= {"values"}
    return names


def wanted(event: str, names: frozenset[str] | None) -> bool:
    """Whether ``event`` (``values``, ``messages/partial``, ``updates|ns``...) is in ``names``."""
    if names is None:
        return True
    return event.split("|", 1)[0] in names


def encode(data: Any) -> str:
    """JSON for a ``data:`` line (never contains a newline)."""
    try:
        # orjson: several times faster than the stdlib, and the server encodes every event.
        return orjson.dumps(data, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # what orjson refuses (e.g. integers beyond 64 bits)
        return json.dumps(data, default=str, ensure_ascii=False, separators=(",", ":"))


async def journal_frame_batches(
    listener: JournalListener,
    run_id: str,
    *,
    after: int = 0,
    names: frozenset[str] | None = None,
    on_abandon: Callable[[], None] | None = None,
    known: Sequence[JournalEvent] = (),
    followed: Followed | None = None,
) -> AsyncGenerator[list[ServerSentEvent], None]:
    """The frames of ``run_id``'s events after seq ``after``, ending after ``end``: a list
    of the frames available without waiting at a time.

    ``on_abandon`` runs when the client goes away before the end (for
    ``on_disconnect=cancel``); it must not await, the request is being torn down.

    ``known`` are the events right after ``after`` that the caller already has
    (a run's first event when it just created the run): sent at once, and the
    journal is read from the last of them. ``followed``: the run was followed
    since before it was created (:meth:`JournalListener.follow`), so the journal
    needs no first read (:func:`sse_response` closes it).
    """
    ended = False
    SSE_STREAMS.inc()
    try:
        if known:
            after = known[-1].seq
            yield [_frame(event) for event in known if wanted(event.event, names)]
        batches = (
            followed.batches(after)
            if followed is not None
            else listener.subscribe_batches(run_id, after)
        )
        async for events in batches:
            batch = [_frame(event) for event in events if wanted(event.event, names)]
            if batch:
                yield batch
            if events[-1].event == "end":
                ended = True
                return
    except Exception as exc:
        logger.exception("the event stream of run %s failed", run_id)
        ended = True
        message = "the event stream failed; reconnect with Last-Event-ID to continue"
        yield [
            ServerSentEvent(
                data=encode({"error": type(exc).__name__, "message": message}), event="error"
            ),
            ServerSentEvent(data=encode(None), event="end"),
        ]
    finally:
        SSE_STREAMS.dec()
        if not ended and on_abandon is not None:
            on_abandon()


def _frame(event: JournalEvent) -> ServerSentEvent:
    data = event.data
    if event.event == "metadata" and isinstance(data, dict) and "trace_id" not in data:
        # The run's trace id is derived from its run id (engine/observability/tracing.py),
        # so the metadata event journaled when the run was created can show it too.
        trace_id = run_trace_id(event.run_id)
        if trace_id is not None:
            data = {**data, "trace_id": trace_id}
    return ServerSentEvent(data=encode(data), event=event.event, id=str(event.seq))


async def coalesced(
    batches: AsyncGenerator[list[ServerSentEvent], None],
) -> AsyncIterator[bytes]:
    """Each list of frames as one chunk: one send through the ASGI stack, not one per event."""
    async with contextlib.aclosing(batches):
        async for batch in batches:
            yield b"".join(frame.encode() for frame in batch)


def sse_response(
    frames: AsyncIterator[ServerSentEvent] | AsyncIterator[bytes],
    headers: dict[str, str],
    followed: Followed | None = None,
) -> EventSourceResponse:
    """An SSE response of ``frames`` (or of encoded chunks of them) with keep-alive comments.

    ``followed`` is closed when the response ends, however it ends: a client gone
    before the first frame leaves the frames' generator never started.
    """
    if followed is None:
        return EventSourceResponse(frames, headers=headers, ping=KEEP_ALIVE_SECONDS, sep="\n")
    return _FollowingResponse(frames, followed, headers=headers, ping=KEEP_ALIVE_SECONDS, sep="\n")


class _FollowingResponse(EventSourceResponse):
    """An SSE response that stops following its run when it ends."""

    def __init__(self, content: Any, followed: Followed, **options: Any) -> None:
        super().__init__(content, **options)
        self._followed = followed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._followed.close()
