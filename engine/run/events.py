"""Typed events a run yields to ``plait run``, ``plait test`` and the tests that drive runs.

They are made from the driver's stream items by
:mod:`plait.engine.run.stream_items`; the server's workers turn the same items
into Agent Server events (``plait.server.queue.stream_events``).

Every event is a frozen dataclass with a ``type`` tag and ``to_dict()`` giving
JSON-ready data (``plait run --json`` prints one per line). ``path`` names the
parent nodes of a node inside a subgraph (empty at the top level; a map item
as ``each[1]``), so a renderer can indent nested nodes and a client can key
node status by ``path + [node]``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from plait.engine.spec.expressions import to_plain

EventType = Literal[
    "run_started",
    "node_started",
    "node_finished",
    "node_failed",
    "token",
    "custom",
    "interrupt",
    "completed",
    "failed",
]

#: Characters of one value shown in an update summary.
SUMMARY_VALUE_CHARS = 60


@dataclass(frozen=True)
class _Event:
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"event": <type>, ...fields}``."""
        data = to_plain(asdict(self))
        event_type = data.pop("type")
        return {"event": event_type, **data}


@dataclass(frozen=True)
class RunStarted(_Event):
    """A run began on a thread. ``mode`` says how: a fresh input, a resume, or a continuation."""

    run_id: str
    thread_id: str
    graph: str
    version: str
    digest: str
    mode: Literal["start", "resume", "continue"]
    git_sha: str | None = None
    type: Literal["run_started"] = "run_started"


@dataclass(frozen=True)
class NodeStarted(_Event):
    """A node's task began (one per task: a map worker run for each item is one task each)."""

    node: str
    task_id: str
    path: list[str] = field(default_factory=list)
    type: Literal["node_started"] = "node_started"


@dataclass(frozen=True)
class NodeFinished(_Event):
    """A node's task finished; ``update`` is what it wrote to state, ``summary`` a short line."""

    node: str
    task_id: str
    update: dict[str, Any]
    summary: str
    path: list[str] = field(default_factory=list)
    type: Literal["node_finished"] = "node_finished"


@dataclass(frozen=True)
class NodeFailed(_Event):
    """A node's task raised; the run fails unless a retry policy runs it again."""

    node: str
    task_id: str
    error: str
    path: list[str] = field(default_factory=list)
    type: Literal["node_failed"] = "node_failed"


@dataclass(frozen=True)
class Token(_Event):
    """A chunk of model output streamed while ``node`` runs."""

    node: str
    text: str
    path: list[str] = field(default_factory=list)
    type: Literal["token"] = "token"


@dataclass(frozen=True)
class Custom(_Event):
    """Data a node sent with LangGraph's stream writer (progress, partial results)."""

    node: str | None
    data: Any
    path: list[str] = field(default_factory=list)
    type: Literal["custom"] = "custom"


@dataclass(frozen=True)
class Interrupted(_Event):
    """The run stopped for a human; resume with ``{interrupt_id: decision}``."""

    node: str | None
    interrupt_id: str
    payload: Any
    type: Literal["interrupt"] = "interrupt"


@dataclass(frozen=True)
class Completed(_Event):
    """The run reached END; ``output`` holds the spec's output fields.

    ``state`` is Plait's (``succeeded``, or ``partially_succeeded`` when a map
    lost items: :mod:`plait.engine.run.states`), ``label`` says it in words.
    """

    output: dict[str, Any]
    state: str = "succeeded"
    label: str = "succeeded"
    type: Literal["completed"] = "completed"


@dataclass(frozen=True)
class Failed(_Event):
    """The run stopped with an error; ``kind`` is ``error`` or ``timeout``."""

    error: str
    node: str | None = None
    kind: Literal["error", "timeout"] = "error"
    type: Literal["failed"] = "failed"


RunEvent = (
    RunStarted
    | NodeStarted
    | NodeFinished
    | NodeFailed
    | Token
    | Custom
    | Interrupted
    | Completed
    | Failed
)


def summarize_update(update: Any) -> str:
    """One short line describing a node's state update: ``field=value, ...`` (values cut)."""
    if not isinstance(update, dict) or not update:
        return "no changes"
    parts = [f"{key}={_short(value)}" for key, value in update.items()]
    return ", ".join(parts)


def _short(value: Any) -> str:
    plain = to_plain(value)
    if isinstance(plain, list):
        text = f"[{len(plain)} item{'s' if len(plain) != 1 else ''}]"
    else:
        text = json.dumps(plain, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    if len(text) > SUMMARY_VALUE_CHARS:
        text = text[: SUMMARY_VALUE_CHARS - 1] + "…"
    return text
