"""What a replayed run gets instead of calling: recorded model replies, tool results and
remote agents' answers.

``plait replay`` (:mod:`plait.engine.run.replay`) runs a spec with a
:class:`Cassette` in play: every model call (``engine/compiler/model_calls.py``)
takes the next reply recorded for its node, every tool call
(``engine/tools/gateway.py``) takes the result recorded for its node, tool and
arguments, and an ``a2a`` node (``engine/compiler/nodes/a2a.py``) takes the
remote task as it settled after each message it sends. Nothing is called. A
call the recording has no answer for means the run took another path than the
recorded one: it fails with :class:`Diverged`, which names the node and what
the recording holds there.

Replies are matched per node in call order; tool results by node, tool and
arguments, each used once; an ``a2a`` node's first message by the node's path,
agent, text and data (each recorded conversation used once), and each decision
it sends back must be the one the recorded run sent.

Everything is kept under the path among subgraphs of the node that asked
(``engine/observability/node_path.py``): its id at the top level (as recordings made
before paths were kept hold them), ``office/desk/classify`` in node ``desk`` of the
subgraph node ``office`` runs, ``claims[1]/classify`` in the subgraph of item 1 of map
``claims``, and ``claims[1]`` for the calls item 1 of a map of ``llm``, ``agent`` or
``tool`` items makes itself. So nodes of one id in a spec and its subgraphs, in a
subgraph two nodes run, or in a map's items each get their own, whatever order items
running at once ask in, and a divergence names the path.

Recordings made before a map's items kept their own calls hold them under the map's
path (``claims``), all items together in call order. A map item asking at
``claims[1]`` where the recording holds nothing is served from there, as those
recordings were replayed: the next reply of the shared queue (:func:`_shared`).
"""

from __future__ import annotations

import contextlib
import re
from collections import deque
from collections.abc import Container, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.messages.ai import UsageMetadata

from plait.engine.governance.loops import StopsRun


@dataclass(frozen=True)
class RecordedModelCall:
    """One model call as recorded: the node's path, the model that answered and its reply.

    ``reply`` is the audit trail's form of a message (``type``, ``content``, and
    ``tool_calls`` and ``usage`` where it has them: ``engine/governance/model_audit.py``).
    """

    node: str
    model: str
    reply: Mapping[str, Any]


@dataclass(frozen=True)
class RecordedToolCall:
    """One tool call as recorded: where (the node's path), with what, and the result."""

    node: str
    tool: str
    args: Mapping[str, Any]
    result: Any


@dataclass(frozen=True)
class RecordedA2aTurn:
    """One turn of an ``a2a`` node's conversation: what it sent, and how the remote answered.

    ``decision`` is the decision sent back as a follow-up (``None`` on the first
    turn, which sends the node's message); ``task`` is the remote task once it
    finished or waited for input, as A2A's JSON without its history.
    """

    decision: Mapping[str, Any] | None
    task: Mapping[str, Any]


@dataclass(frozen=True)
class RecordedA2aCall:
    """One ``a2a`` step's conversation with its remote agent, as recorded.

    ``node`` is the node's path among subgraphs (its id at the top level); ``args`` is
    what the step sent first: ``{agent, message, data}``.
    """

    node: str
    args: Mapping[str, Any]
    turns: Sequence[RecordedA2aTurn]


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
        self,
        models: Sequence[RecordedModelCall],
        tools: Sequence[RecordedToolCall],
        remote: Sequence[RecordedA2aCall] = (),
    ) -> None:
        self._replies: dict[str, deque[RecordedModelCall]] = {}
        for call in models:
            self._replies.setdefault(call.node, deque()).append(call)
        self._tools = list(tools)
        self._tool_nodes = {call.node for call in self._tools}
        self._used_tools: set[int] = set()
        self._asked: dict[str, int] = {}
        self._remote = list(remote)
        #: The recorded conversations begun, by index: the last turn given out of each.
        self._turn: dict[int, int] = {}
        #: The same, by remote task id (what the node holds when it asks again).
        self._by_task: dict[str, int] = {}

    def model_reply(self, node: str, model: str) -> AIMessage:
        """The next reply recorded for ``node`` (its path); :class:`Diverged` when none is left."""
        key = _shared(node, self._replies)
        asked = self._asked[key] = self._asked.get(key, 0) + 1
        queue = self._replies.get(key)
        if not queue:
            had = asked - 1
            if key != node:
                raise Diverged(
                    node,
                    f"it asked {model!r} for reply {asked} of the items of map {key!r}, whose "
                    "calls the recording keeps together (made before each item's were kept "
                    f"apart); it had {had}",
                )
            raise Diverged(
                node,
                f"it asked {model!r} for reply {asked} in this node; the recorded run "
                f"had {had} model call(s) here",
            )
        return _message(queue.popleft().reply)

    def tool_result(self, node: str, tool: str, args: Mapping[str, Any]) -> Any:
        """The result recorded for this call of ``node`` (its path); :class:`Diverged` when
        none matches."""
        key = _shared(node, self._tool_nodes)
        same_tool = []
        for index, call in enumerate(self._tools):
            if index in self._used_tools or call.node != key or call.tool != tool:
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

    def a2a_message(self, node: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
        """The remote task as it settled after ``node`` sent its first message (``args``).

        ``node`` is the node's path (:mod:`plait.engine.observability.node_path`).
        :class:`Diverged` when no recorded conversation of ``node`` that is not
        begun yet sent the same agent the same text and data.
        """
        other: Mapping[str, Any] | None = None
        for index, call in enumerate(self._remote):
            if index in self._turn or call.node != node:
                continue
            if dict(call.args) == dict(args):
                if not call.turns:
                    raise Diverged(
                        node,
                        f"it sent {args.get('agent')!r} the message {_said(args)}; the recorded "
                        "run got no answer to it",
                    )
                self._turn[index] = 0
                self._by_task[str(call.turns[0].task.get("id"))] = index
                return call.turns[0].task
            other = other or call.args
        if other is None:
            recorded = "the recorded run sent no such message here"
        elif other.get("agent") == args.get("agent"):
            recorded = f"the recording sent it {_said(other)}"
        else:
            recorded = f"the recording sent {other.get('agent')!r} {_said(other)}"
        raise Diverged(node, f"it sent {args.get('agent')!r} the message {_said(args)}; {recorded}")

    def a2a_task(self, task_id: str) -> Mapping[str, Any]:
        """Remote task ``task_id`` (begun by this replay) as it stands: its last answer given."""
        index = self._by_task[task_id]
        return self._remote[index].turns[self._turn[index]].task

    def a2a_follow_up(
        self, node: str, task_id: str, decision: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """The remote task as it settled after ``decision`` was sent to it.

        ``task_id`` is a task this replay began. :class:`Diverged` when the recorded
        run sent another decision at this turn, or none (its conversation ended here).
        """
        index = self._by_task[task_id]
        call, turn = self._remote[index], self._turn[index] + 1
        if turn >= len(call.turns):
            raise Diverged(
                node,
                f"it answered the remote task with {_short(decision)}; the recording holds "
                f"{turn - 1} answer(s) to it",
            )
        recorded = call.turns[turn].decision
        if dict(recorded or {}) != dict(decision):
            raise Diverged(
                node,
                f"it answered the remote task with {_short(decision)}; the recording "
                f"answered {_short(recorded)}",
            )
        self._turn[index] = turn
        return call.turns[turn].task

    def unused(self) -> tuple[int, int, int]:
        """Model replies, tool results and remote agents' answers recorded but never given."""
        replies = sum(len(queue) for queue in self._replies.values())
        answers = sum(
            len(call.turns) - (self._turn[index] + 1 if index in self._turn else 0)
            for index, call in enumerate(self._remote)
        )
        return replies, len(self._tools) - len(self._used_tools), answers


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


#: The last segment of a map item's own path: the map's id and the item's index.
_ITEM_OWN = re.compile(r"(\w+)\[\d+\]")


def _shared(node: str, recorded: Container[str]) -> str:
    """Where the recording keeps the calls ``node`` (a path) asks for: the path itself, or
    for a map item's own calls (``office/claims[1]``) with none recorded there, the map's
    path (``office/claims``) when calls are recorded there.

    A recording made before a map's items kept their own calls holds all of them under
    the map's path, in call order: its items share that queue, as they did then. A
    recording made since holds none there (the map's calls are its items'), so an item
    the recording lacks still diverges at its own path. Only a map item's own work has a
    path that ends in ``[i]``: a node inside an item's subgraph ends in its id.
    """
    if node in recorded:
        return node
    head, slash, last = node.rpartition("/")
    found = _ITEM_OWN.fullmatch(last)
    if found is None:
        return node
    together = f"{head}{slash}{found[1]}"
    return together if together in recorded else node


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


def _said(args: Mapping[str, Any]) -> str:
    """The text an ``a2a`` node sent, with its data part if it had one."""
    data = args.get("data")
    text = repr(args.get("message"))
    return text if data is None else f"{text} with data {_short(data)}"


def _short(value: Any, limit: int = 120) -> str:
    text = repr(dict(value) if isinstance(value, Mapping) else value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
