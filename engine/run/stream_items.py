"""The run events of ``plait run`` and ``plait test``, made from the driver's stream items.

One event model, two adapters: :func:`plait.engine.run.driver.drive` yields
LangGraph's stream items (:data:`~plait.engine.run.driver.Item`); this module
turns them into the typed events of :mod:`plait.engine.run.events` for the
terminal and ``--json``, and ``plait.server.queue.stream_events`` turns the
same items into the Agent Server's SSE events. Node start and finish come from
the ``tasks`` mode (one pair per task, with its writes or error), tokens from
``messages``, custom data from ``custom``.

A node inside a map item's subgraph has the item in its path as ``each[1]``, as
its errors and audit name it. LangGraph's namespace says which nested call of the
map's task an item is only from the second on (``each:<task>|1``; the first has no
count), so the converter is told where the maps whose items run subgraphs are.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from langchain_core.messages import AIMessageChunk

from plait.engine.errors import NodeError
from plait.engine.run.driver import Item
from plait.engine.run.events import (
    Custom,
    NodeFailed,
    NodeFinished,
    NodeStarted,
    RunEvent,
    Token,
    summarize_update,
)
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.expressions import to_plain
from plait.engine.spec.models import MapNode
from plait.engine.spec.nesting import Resolve, places

#: A node's place as the ids of the nodes around it, outermost first, then its own.
NodeIds = tuple[str, ...]


def subgraph_maps(loaded: LoadedSpec, resolve: Resolve) -> frozenset[NodeIds]:
    """Where the maps whose items run a subgraph are, in ``loaded`` and the specs it runs."""
    return frozenset(
        (*(outer.node_id for outer in place.within), place.node_id)
        for place in places(loaded, resolve)
        if isinstance(place.node, MapNode) and place.node.do.kind == "subgraph"
    )


def path_of(namespace: tuple[str, ...], maps: Collection[NodeIds] = ()) -> list[str]:
    """The path of the nodes in ``namespace``: the nodes around them, outermost first, each
    map item as ``map[index]`` (item ``index`` is the map task's nested call ``index``)."""
    path: list[str] = []
    ids: list[str] = []
    at = 0
    while at < len(namespace):
        name = namespace[at].split(":", 1)[0]
        at += 1
        ids.append(name)
        if tuple(ids) not in maps:
            path.append(name)
            continue
        index = 0  # the first nested call has no count
        if at < len(namespace) and namespace[at].isdigit():
            index = int(namespace[at])
            at += 1
        path.append(f"{name}[{index}]")
    return path


class EventsOfItems:
    """Turns the driver's stream items into run events, one item at a time."""

    def __init__(self, maps: Collection[NodeIds] = ()) -> None:
        """``maps``: :func:`subgraph_maps` of the spec that runs (its items' paths name them)."""
        self._maps = maps
        # Running task names per namespace, to attribute custom data to a node.
        self._running: dict[tuple[str, ...], dict[str, str]] = {}
        self.last_failed: str | None = None

    def convert(self, item: Item) -> list[RunEvent]:
        """The events ``item`` makes (none for LangGraph's and the compiler's own nodes)."""
        namespace, mode, data = item
        path = path_of(namespace, self._maps)
        if mode == "tasks":
            return self._task(namespace, path, data)
        if mode == "messages":
            chunk, metadata = data
            text = chunk.text if isinstance(chunk, AIMessageChunk) else ""
            node = metadata.get("langgraph_node")
            if not text or not isinstance(node, str) or _internal(node):
                return []
            return [Token(node=node, text=text, path=path)]
        if mode == "custom":
            running = list(self._running.get(namespace, {}).values())
            node = running[0] if len(running) == 1 else None
            return [Custom(node=node, data=to_plain(data), path=path)]
        return []

    def _task(
        self, namespace: tuple[str, ...], path: list[str], data: dict[str, Any]
    ) -> list[RunEvent]:
        name, task_id = data["name"], data["id"]
        running = self._running.setdefault(namespace, {})
        if "input" in data:
            running[task_id] = name
            return [] if _internal(name) else [NodeStarted(node=name, task_id=task_id, path=path)]
        running.pop(task_id, None)
        if _internal(name):
            return []
        if data.get("error") is not None:
            self.last_failed = name
            return [
                NodeFailed(node=name, task_id=task_id, error=error_text(data["error"]), path=path)
            ]
        if data.get("interrupts"):
            # Waiting for a person: the interrupt event follows once the stream ends.
            return []
        update = _update_dict(data.get("result"))
        return [
            NodeFinished(
                node=name,
                task_id=task_id,
                update=update,
                summary=summarize_update(update),
                path=path,
            )
        ]


def _internal(name: str) -> bool:
    """LangGraph's own and the compiler's helper nodes (ids starting with ``__``)."""
    return name.startswith("__")


def _update_dict(result: Any) -> dict[str, Any]:
    """A task's writes as a plain dict (LangGraph gives a dict, or a list of pairs)."""
    if isinstance(result, Mapping):
        return {str(k): to_plain(v) for k, v in result.items() if not str(k).startswith("__")}
    if isinstance(result, list):
        merged: dict[str, Any] = {}
        for entry in result:
            if isinstance(entry, tuple | list) and len(entry) == 2:
                merged[str(entry[0])] = to_plain(entry[1])
        return merged
    return {}


def error_text(error: BaseException | str | Any) -> str:
    """A failure as users read it: ``Type: message``, or a node error's own text."""
    if isinstance(error, NodeError):
        return str(error)  # already "node 'x': <what went wrong>"
    if isinstance(error, BaseException):
        message = str(error).strip()
        return f"{type(error).__name__}: {message}" if message else type(error).__name__
    return str(error)
