"""LangGraph stream chunks -> the Agent Server's SSE events (name and JSON payload).

The names and payloads are those of the LangGraph Agent Server (``langgraph
dev``), which the LangGraph SDKs parse: one event per chunk, named after its
stream mode (``values``, ``updates``, ``messages``, ``custom``, ``debug``,
``tasks``, ``checkpoints``), with ``|<namespace>`` appended for chunks from a
subgraph when subgraphs are streamed. Both message modes come from
LangGraph's ``messages`` mode: ``messages-tuple`` arrives as ``messages`` with
``[message_chunk, metadata]``; ``messages`` as the Agent Server's
``messages/metadata`` (once per message id), ``messages/partial`` (the message
accumulated so far) and ``messages/complete`` (a whole message).
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, BaseMessageChunk, message_chunk_to_message
from langgraph.types import Interrupt, Send
from pydantic import BaseModel

#: Agent Server stream mode -> LangGraph stream mode.
_MODES = {
    "values": "values",
    "updates": "updates",
    "messages-tuple": "messages",
    "messages": "messages",
    "custom": "custom",
    "debug": "debug",
    "tasks": "tasks",
    "checkpoints": "checkpoints",
}

#: What the Agent Server streams when a request names no mode.
DEFAULT_STREAM_MODES = ("values",)

INTERRUPT_KEY = "__interrupt__"


@dataclass
class MessageAccumulator:
    """The Agent Server's ``messages`` mode: each message id's chunks added up.

    One per run attempt. A run continued by another worker starts with none:
    its new model calls have new message ids.
    """

    _messages: dict[str, BaseMessage] = field(default_factory=dict)

    def events(self, message: Any, metadata: Any) -> list[tuple[str, Any]]:
        """``messages/metadata`` for a new id, then ``messages/partial`` (a chunk:
        the accumulated message) or ``messages/complete`` (a whole message)."""
        if not isinstance(message, BaseMessage):
            return []
        message_id = message.id or f"run-{uuid.uuid4()}"
        events: list[tuple[str, Any]] = []
        before = self._messages.get(message_id)
        if before is not None:
            # Chunks add up; a whole message with a known id replaces what came before.
            if isinstance(before, BaseMessageChunk) and isinstance(message, BaseMessageChunk):
                self._messages[message_id] = before + message
            else:
                self._messages[message_id] = message
        else:
            self._messages[message_id] = message
            events.append(("messages/metadata", {message_id: {"metadata": to_json(metadata)}}))
        # As the Agent Server sends it: the whole message so far, as a message
        # (`type: "ai"`), not as a chunk, in a list of one.
        whole = message_chunk_to_message(self._messages[message_id])
        dumped = to_json(whole)
        dumped["id"] = message_id
        kind = "messages/partial" if isinstance(message, BaseMessageChunk) else "messages/complete"
        events.append((kind, [dumped]))
        return events


@dataclass(frozen=True)
class StreamPlan:
    """Which LangGraph modes to stream, and which of them become journal events.

    ``message_modes`` are the requested Agent Server modes served by LangGraph's
    ``messages`` mode: ``messages-tuple`` and/or ``messages``.
    """

    requested: frozenset[str]
    langgraph_modes: tuple[str, ...]
    subgraphs: bool
    message_modes: frozenset[str] = frozenset()
    _accumulator: MessageAccumulator = field(
        default_factory=MessageAccumulator, init=False, compare=False, repr=False
    )

    def events(self, namespace: tuple[str, ...], mode: str, chunk: Any) -> list[tuple[str, Any]]:
        """The journal events of one LangGraph chunk (none when its mode was not requested)."""
        if mode == "messages":
            message, metadata = chunk
            events: list[tuple[str, Any]] = []
            if "messages-tuple" in self.message_modes:
                events.append(
                    (self._name("messages", namespace), [to_json(message), to_json(metadata)])
                )
            if "messages" in self.message_modes:
                events.extend(
                    (self._name(name, namespace), data)
                    for name, data in self._accumulator.events(message, metadata)
                )
            return events
        if mode in self.requested:
            return [(self._name(mode, namespace), to_json(chunk))]
        if (
            mode == "updates"
            and "values" not in self.requested
            and isinstance(chunk, Mapping)
            and chunk.get(INTERRUPT_KEY)
        ):
            # As the Agent Server does: a client that asked for neither updates nor
            # values still learns of the interrupt, as a values event. (With values
            # requested, LangGraph's own values chunk already carries __interrupt__.)
            return [(self._name("values", namespace), to_json(chunk))]
        return []

    def _name(self, mode: str, namespace: tuple[str, ...]) -> str:
        return f"{mode}|{'|'.join(namespace)}" if self.subgraphs and namespace else mode


def plan_stream(stream_mode: str | Iterable[str] | None, subgraphs: bool) -> StreamPlan:
    """The plan for a run's ``stream_mode`` (a name, a list, or none: ``values``).

    ``updates`` is always streamed from LangGraph: interrupts arrive there;
    ``custom`` too: Plait's marks of a run's state (map items lost, retries:
    :mod:`plait.engine.run.marks`) arrive there. Each is journaled only when
    requested. Unknown modes (e.g. ``events``) are ignored.
    """
    if stream_mode is None:
        names: tuple[str, ...] = DEFAULT_STREAM_MODES
    elif isinstance(stream_mode, str):
        names = (stream_mode,)
    else:
        names = tuple(stream_mode)
    requested = frozenset(_MODES[name] for name in names if name in _MODES)
    modes = tuple(sorted(requested | {"updates", "custom"}))
    return StreamPlan(
        requested=requested,
        langgraph_modes=modes,
        subgraphs=subgraphs,
        message_modes=frozenset(names) & {"messages", "messages-tuple"},
    )


def interrupts_of(chunk: Any) -> list[dict[str, Any]]:
    """The ``[{id, value}]`` interrupts in an ``updates`` chunk (empty when none)."""
    if not isinstance(chunk, Mapping):
        return []
    found = chunk.get(INTERRUPT_KEY) or ()
    return [to_json(item) for item in found if isinstance(item, Interrupt)]


def to_json(value: Any) -> Any:
    """JSON-like data of a stream payload, shaped as the Agent Server serialises it.

    LangChain messages become their ``model_dump()`` (``type`` is the class
    kind, e.g. ``AIMessageChunk``, which the SDKs read); interrupts become
    ``{value, id}``; anything unknown becomes its ``str``.
    """
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Interrupt):
        return {"value": to_json(value.value), "id": value.id}
    if isinstance(value, Mapping):
        return {str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_json(item) for item in value]
    if isinstance(value, BaseModel):
        return to_json(value.model_dump())
    if isinstance(value, Send):
        return {"node": value.node, "arg": to_json(value.arg)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)
