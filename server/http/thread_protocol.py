"""A run's journal as the events of the thread streaming protocol (``@langchain/protocol``).

``@langchain/langgraph-sdk`` 1.15's ``client.threads.stream`` reads a thread's
events from ``POST /threads/:id/stream/events`` as protocol events:
``{type: "event", event_id, seq, method, params: {namespace, timestamp, data}}``.
The journal holds the Agent Server's events (``metadata``, ``values``,
``updates``, ``messages`` tuples, ``custom``, ``error``, ``end``); a
:class:`RunTranslator` turns them, in order, into the protocol's:

- ``metadata`` -> ``lifecycle`` ``started``; ``error`` -> ``lifecycle`` ``failed``;
  ``end`` -> ``lifecycle`` ``interrupted`` (the run stopped on an interrupt),
  ``completed``, or ``failed`` (a cancelled run);
- ``values`` -> ``values`` (without ``__interrupt__``);
- ``updates`` -> one ``updates`` ``{node, values}`` per node, and an
  ``input.requested`` ``{interrupt_id, payload}`` per interrupt;
- ``messages`` ``[chunk, metadata]`` -> ``messages`` ``message-start``,
  ``content-block-start``, ``content-block-delta`` (``text-delta``),
  ``content-block-finish`` and ``message-finish`` (a text block, then tool calls);
- ``custom`` -> ``custom`` ``{payload}``.

Each protocol event's ``seq`` is ``queue_id * RUN_SPAN + journal seq``: the
run's place on the thread (``plait_runs.queue_id``, which never changes)
before its event's, so seqs grow across the thread's runs and ``since`` names
a run and an event in it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plait.server.queue.journal import JournalEvent

#: Journal seqs a run may use before its protocol seqs would reach the next run's.
RUN_SPAN = 10_000_000

#: Channels of protocol events by method (as the SDK's ``inferChannel``).
CHANNELS = {
    "lifecycle": "lifecycle",
    "values": "values",
    "updates": "updates",
    "messages": "messages",
    "custom": "custom",
    "input.requested": "input",
}

INTERRUPT_KEY = "__interrupt__"

#: LangChain message types -> protocol roles (other messages are not sent on ``messages``).
_ROLES = {
    "AIMessageChunk": "ai",
    "ai": "ai",
    "HumanMessageChunk": "human",
    "human": "human",
    "SystemMessageChunk": "system",
    "system": "system",
}


@dataclass(frozen=True)
class EventFilter:
    """What one ``stream/events`` connection asked for: channels, namespace prefixes, depth."""

    channels: frozenset[str]
    namespaces: tuple[tuple[str, ...], ...] | None = None
    depth: int | None = None

    def matches(self, method: str, namespace: Sequence[str]) -> bool:
        """Whether an event of ``method`` in ``namespace`` is wanted (the SDK's rules)."""
        channel = CHANNELS.get(method)
        if channel is None or channel not in self.channels:
            return False
        if not self.namespaces:
            return True
        return any(
            _is_prefix(namespace, prefix)
            and (self.depth is None or len(namespace) - len(prefix) <= self.depth)
            for prefix in self.namespaces
        )


def _is_prefix(namespace: Sequence[str], prefix: Sequence[str]) -> bool:
    """``prefix`` starts ``namespace``; a segment without ``:`` also matches ``name:<id>``."""
    if len(prefix) > len(namespace):
        return False
    for wanted, segment in zip(prefix, namespace, strict=False):
        if segment == wanted:
            continue
        if ":" in wanted or segment.split(":", 1)[0] != wanted:
            return False
    return True


@dataclass(frozen=True)
class ProtocolEvent:
    """One protocol event of a run; ``seq`` is the thread-wide one."""

    seq: int
    index: int
    method: str
    namespace: tuple[str, ...]
    data: Any
    node: str | None = None

    @property
    def event_id(self) -> str:
        """Unique on the thread: several protocol events can come from one journal event."""
        return f"{self.seq}.{self.index}"

    def to_json(self) -> dict[str, Any]:
        """The event as the SDK reads it from an SSE ``data:`` line."""
        params: dict[str, Any] = {
            "namespace": list(self.namespace),
            "timestamp": int(time.time() * 1000),
            "data": self.data,
        }
        if self.node is not None:
            params["node"] = self.node
        return {
            "type": "event",
            "event_id": self.event_id,
            "seq": self.seq,
            "method": self.method,
            "params": params,
        }


@dataclass
class _OpenMessage:
    node: str | None
    text: str = ""
    usage: dict[str, Any] | None = None
    #: Tool calls by content block index (the text is block 0): ``{id, name, args}``.
    tools: dict[int, dict[str, str]] = field(default_factory=dict)


@dataclass
class RunTranslator:
    """Translates one run's journal events, in order, into protocol events.

    ``status_at_end`` is the run's final status, read when its ``end`` arrives
    (a cancelled run ends ``interrupted`` with no ``error`` event).
    """

    queue_id: int
    graph_name: str
    interrupted: bool = False
    failed: bool = False
    _messages: dict[tuple[tuple[str, ...], str], _OpenMessage] = field(default_factory=dict)

    def seq_of(self, journal_seq: int) -> int:
        """The thread-wide seq of this run's journal event ``journal_seq``."""
        return self.queue_id * RUN_SPAN + journal_seq

    def translate(
        self, event: JournalEvent, status_at_end: str | None = None
    ) -> list[ProtocolEvent]:
        """The protocol events of one journal event (none for events the protocol lacks)."""
        base, _, rest = event.event.partition("|")
        namespace = tuple(rest.split("|")) if rest else ()
        out: list[tuple[str, tuple[str, ...], Any, str | None]] = []
        if base == "metadata":
            if isinstance(event.data, Mapping) and event.data.get("attempt", 1) == 1:
                out.append(
                    ("lifecycle", (), {"event": "started", "graph_name": self.graph_name}, None)
                )
        elif base == "values":
            data = event.data
            if isinstance(data, Mapping):
                data = {key: value for key, value in data.items() if key != INTERRUPT_KEY}
            out.append(("values", namespace, data, None))
        elif base == "updates" and isinstance(event.data, Mapping):
            out.extend(self._updates(namespace, event.data))
        elif base == "messages" and isinstance(event.data, list) and len(event.data) == 2:
            out.extend(self._message(namespace, event.data[0], event.data[1]))
        elif base == "custom":
            out.append(("custom", namespace, {"payload": event.data}, None))
        elif base == "error":
            out.extend(self._finish_all())
            self.failed = True
            message = event.data.get("message") if isinstance(event.data, Mapping) else event.data
            out.append(("lifecycle", (), {"event": "failed", "error": str(message)}, None))
        elif base == "end":
            out.extend(self._finish_all())
            if not self.failed:
                out.append(("lifecycle", (), self._terminal(status_at_end), None))
        return [
            ProtocolEvent(self.seq_of(event.seq), index, method, ns, data, node)
            for index, (method, ns, data, node) in enumerate(out)
        ]

    def _terminal(self, status: str | None) -> dict[str, Any]:
        if status == "interrupted":
            return {"event": "failed", "error": "the run was cancelled"}
        if status in ("error", "timeout"):
            return {"event": "failed", "error": f"the run ended {status}"}
        return {"event": "interrupted" if self.interrupted else "completed"}

    def _updates(
        self, namespace: tuple[str, ...], data: Mapping[str, Any]
    ) -> Iterable[tuple[str, tuple[str, ...], Any, str | None]]:
        for node, values in data.items():
            if node == INTERRUPT_KEY:
                for item in values or ():
                    if isinstance(item, Mapping):
                        self.interrupted = self.interrupted or not namespace
                        payload = {"interrupt_id": item.get("id"), "payload": item.get("value")}
                        yield ("input.requested", namespace, payload, None)
                continue
            # A node's update ends the messages it streamed.
            yield from self._finish(namespace, node)
            values = values if isinstance(values, Mapping) else {}
            yield ("updates", namespace, {"node": node, "values": dict(values)}, node)

    def _message(
        self, namespace: tuple[str, ...], chunk: Any, metadata: Any
    ) -> Iterable[tuple[str, tuple[str, ...], Any, str | None]]:
        if not isinstance(chunk, Mapping):
            return
        role = _ROLES.get(str(chunk.get("type")))
        message_id = chunk.get("id")
        if role is None or not message_id:
            return
        node = metadata.get("langgraph_node") if isinstance(metadata, Mapping) else None
        key = (namespace, str(message_id))
        opened = self._messages.get(key)
        if opened is None:
            opened = self._messages[key] = _OpenMessage(node)
            yield (
                "messages",
                namespace,
                {"event": "message-start", "role": role, "id": message_id},
                node,
            )
            start = {
                "event": "content-block-start",
                "index": 0,
                "content": {"type": "text", "text": ""},
            }
            yield ("messages", namespace, start, node)
        text = _text_of(chunk.get("content"))
        if text:
            opened.text += text
            delta = {"type": "text-delta", "text": text}
            yield (
                "messages",
                namespace,
                {"event": "content-block-delta", "index": 0, "delta": delta},
                node,
            )
        yield from self._tool_calls(namespace, opened, chunk)
        if isinstance(chunk.get("usage_metadata"), Mapping):
            opened.usage = dict(chunk["usage_metadata"])
        whole = not str(chunk.get("type", "")).endswith("Chunk")
        if whole or chunk.get("chunk_position") == "last":
            yield from self._close(key)

    def _tool_calls(
        self, namespace: tuple[str, ...], opened: _OpenMessage, chunk: Mapping[str, Any]
    ) -> Iterable[tuple[str, tuple[str, ...], Any, str | None]]:
        """Tool-call blocks: streamed ``tool_call_chunks``, or a whole message's ``tool_calls``."""
        pieces: list[tuple[int, Mapping[str, Any], str]] = []
        for position, piece in enumerate(chunk.get("tool_call_chunks") or ()):
            if isinstance(piece, Mapping):
                index = piece.get("index")
                slot = index if isinstance(index, int) else position
                pieces.append((slot, piece, str(piece.get("args") or "")))
        if not pieces and not str(chunk.get("type", "")).endswith("Chunk"):
            for position, call in enumerate(chunk.get("tool_calls") or ()):
                if isinstance(call, Mapping):
                    pieces.append((position, call, json.dumps(call.get("args") or {})))
        for slot, piece, args in pieces:
            index = slot + 1
            call = opened.tools.get(index)
            if call is None:
                call = opened.tools[index] = {"id": "", "name": "", "args": ""}
                for key in ("id", "name"):
                    call[key] = str(piece.get(key) or "")
                block = {"type": "tool_call_chunk", "id": call["id"], "name": call["name"]}
                start = {
                    "event": "content-block-start",
                    "index": index,
                    "content": {**block, "args": ""},
                }
                yield ("messages", namespace, start, opened.node)
            if args:
                call["args"] += args
                delta = {"type": "tool-call-delta", "args": args}
                event = {"event": "content-block-delta", "index": index, "delta": delta}
                yield ("messages", namespace, event, opened.node)

    def _finish(
        self, namespace: tuple[str, ...], node: str
    ) -> Iterable[tuple[str, tuple[str, ...], Any, str | None]]:
        for key in [k for k, m in self._messages.items() if k[0] == namespace and m.node == node]:
            yield from self._close(key)

    def _finish_all(self) -> list[tuple[str, tuple[str, ...], Any, str | None]]:
        return [item for key in list(self._messages) for item in self._close(key)]

    def _close(
        self, key: tuple[tuple[str, ...], str]
    ) -> Iterable[tuple[str, tuple[str, ...], Any, str | None]]:
        opened = self._messages.pop(key)
        namespace = key[0]
        block = {"type": "text", "text": opened.text}
        yield (
            "messages",
            namespace,
            {"event": "content-block-finish", "index": 0, "content": block},
            opened.node,
        )
        for index, call in sorted(opened.tools.items()):
            finished = {
                "event": "content-block-finish",
                "index": index,
                "content": _tool_call(call),
            }
            yield ("messages", namespace, finished, opened.node)
        finish: dict[str, Any] = {"event": "message-finish"}
        if opened.usage:
            finish["usage"] = opened.usage
        yield ("messages", namespace, finish, opened.node)


def _tool_call(call: Mapping[str, str]) -> dict[str, Any]:
    """A finished tool-call block: its arguments parsed (``invalid_tool_call`` when they
    are not a JSON object)."""
    try:
        args = json.loads(call["args"] or "{}")
    except ValueError:
        args = None
    if not isinstance(args, dict):
        return {
            "type": "invalid_tool_call",
            "id": call["id"],
            "name": call["name"],
            "args": call["args"],
            "error": "the arguments are not a JSON object",
        }
    return {"type": "tool_call", "id": call["id"], "name": call["name"], "args": args}


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text blocks of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, Mapping) and block.get("type") == "text"
        )
    return ""
