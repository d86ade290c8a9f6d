"""What a replayed run gets instead of calling: recorded model replies and tool results.

``plait replay`` (:mod:`plait.engine.run.replay`) runs a spec with a
:class:`Cassette` in play: every model call (``engine/compiler/model_calls.py``)
takes the next reply recorded for its node, and every tool call
(``engine/tools/gateway.py``) takes the result recorded for its node, tool and
arguments. Nothing is called. A call the recording has no answer for means the
run took another path than the recorded one: it fails with :class:`Diverged`,
which names the node and what the recording holds there.

Replies are matched per node in call order (a map's items running at once may
ask in another order than they did when recorded); tool results by node, tool
and arguments, each used once.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.messages.ai import UsageMetadata

from plait.engine.governance.loops import StopsRun


@dataclass(frozen=True)
class RecordedModelCall:
    """One model call as recorded: the node, the model that answered and its reply.

    ``reply`` is the audit trail's form of a message (``type``, ``content``, and
    ``tool_calls`` and ``usage`` where it has them: ``engine/governance/model_audit.py``).
    """

    node: str
    model: str
    reply: Mapping[str, Any]


@dataclass(frozen=True)
class RecordedToolCall:
    """One tool call as recorded: where, with what, and the result it returned."""

    node: str
    tool: str
    args: Mapping[str, Any]
    result: Any


class Diverged(StopsRun):
    """The replayed run asked for something the recorded run did not: its path changed.

    It ends the run where it is raised: an agent does not hand it to its model
    (a ``StopsRun``), a map does not count it as one lost item (``ends_map``).
    """

    ends_map = True

    def __init__(self, node: str, message: str) -> None:
        super().__init__(node, f"diverged from the recording: {message}", transient=False)


class Cassette:
    """Recorded answers for one replayed thread, each given out once."""

    def __init__(
        self, models: Sequence[RecordedModelCall], tools: Sequence[RecordedToolCall]
    ) -> None:
        self._replies: dict[str, deque[RecordedModelCall]] = {}
        for call in models:
            self._replies.setdefault(call.node, deque()).append(call)
        self._tools = list(tools)
        self._used_tools: set[int] = set()
        self._asked: dict[str, int] = {}

    def model_reply(self, node: str, model: str) -> AIMessage:
        """The next reply recorded for ``node``; :class:`Diverged` when there is none left."""
        asked = self._asked[node] = self._asked.get(node, 0) + 1
        queue = self._replies.get(node)
        if not queue:
            had = asked - 1
            raise Diverged(
                node,
                f"it asked {model!r} for reply {asked} in this node; the recorded run "
                f"had {had} model call(s) here",
            )
        return _message(queue.popleft().reply)

    def tool_result(self, node: str, tool: str, args: Mapping[str, Any]) -> Any:
        """The result recorded for this call; :class:`Diverged` when none matches."""
        same_tool = []
        for index, call in enumerate(self._tools):
            if index in self._used_tools or call.node != node or call.tool != tool:
                continue
            if dict(call.args) == dict(args):
                self._used_tools.add(index)
                return call.result
            same_tool.append(call.args)
        recorded = (
            f"; the recording called it with {_short(same_tool[0])}"
            if same_tool
            else "; the recorded run made no such call here"
        )
        raise Diverged(node, f"it called tool {tool!r} with {_short(args)}{recorded}")

    def unused(self) -> tuple[int, int]:
        """Model replies and tool results recorded but never asked for."""
        replies = sum(len(queue) for queue in self._replies.values())
        return replies, len(self._tools) - len(self._used_tools)


_PLAYING: ContextVar[Cassette | None] = ContextVar("plait_cassette", default=None)


def current_cassette() -> Cassette | None:
    """The cassette of the replay running in this context, if any."""
    return _PLAYING.get()


@contextlib.contextmanager
def playing(cassette: Cassette) -> Iterator[Cassette]:
    """Serve model calls and tool calls in this context (its tasks too) from ``cassette``."""
    token = _PLAYING.set(cassette)
    try:
        yield cassette
    finally:
        _PLAYING.reset(token)


def _message(reply: Mapping[str, Any]) -> AIMessage:
    """The recorded reply as the model's message."""
    calls = [
        {
            "name": call["name"],
            "args": call.get("args") or {},
            "id": call.get("id"),
            "type": "tool_call",
        }
        for call in reply.get("tool_calls") or []
    ]
    usage = reply.get("usage")
    tokens = None
    if isinstance(usage, Mapping):
        inputs, outputs = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
        tokens = UsageMetadata(
            input_tokens=inputs,
            output_tokens=outputs,
            total_tokens=int(usage.get("total_tokens", inputs + outputs)),
        )
    return AIMessage(content=reply.get("content", ""), tool_calls=calls, usage_metadata=tokens)


def _short(value: Any, limit: int = 120) -> str:
    text = repr(dict(value) if isinstance(value, Mapping) else value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
