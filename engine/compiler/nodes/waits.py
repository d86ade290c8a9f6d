"""What a map item gets when something in it would wait: a clear error, not an interrupt.

A ``map`` runs its items in its one step, and a subgraph item's child runs detached,
with no checkpoint of its own (docs/decisions.md 17): nothing could resume an item that
waited for a person (an ``approval``, an ``a2a`` node whose remote asks for input, a
high-risk tool, a budget that asks) or for a time (``wait``). Such an interrupt used to
fail the item with LangGraph's ``GraphInterrupt`` as its message. It fails the item
with :class:`ItemCannotWait` instead, which says which map, which item, which node (its
path among subgraphs) and what to do. ``plait validate`` says the same before anything
runs where the spec shows it (``engine/spec/lint/map_items.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.errors import GraphInterrupt

from plait.engine.errors import NodeError
from plait.engine.observability.node_path import item_path, map_item, node_path


class ItemCannotWait(NodeError):
    """Something in a map item would wait for a person or a time; never retried."""

    def __init__(self, node: str, message: str) -> None:
        super().__init__(node, message, transient=False)


def in_item_node(node_id: str, kind: str, exc: GraphInterrupt) -> ItemCannotWait | None:
    """The error for node ``node_id`` (of ``kind``) waiting inside a map item's subgraph,
    named by its path; ``None`` outside map items (its interrupt parks the run as usual)."""
    item = map_item()
    if item is None:
        return None
    return _cannot_wait(node_path(node_id), kind, exc, *item)


def in_item(map_id: str, do_kind: str, index: int, exc: GraphInterrupt) -> ItemCannotWait:
    """The error for item ``index`` of map ``map_id`` waiting in its own work (a high-risk
    tool asking for approval, an MCP task, a budget that asks), named ``map_id[index]``."""
    return _cannot_wait(item_path(map_id, index), do_kind, exc, map_id, index)


def _cannot_wait(
    path: str, kind: str, exc: GraphInterrupt, map_id: str, index: int
) -> ItemCannotWait:
    return ItemCannotWait(
        path,
        f"{_waits_for(kind, exc)}, but it runs inside item {index} of map {map_id!r}, which "
        f"cannot wait: {_WHY}; {_fix(kind)}",
    )


_WHY = (
    "the map runs its items within its one step, with no checkpoint to resume an item from "
    "(see `map` in docs/spec-language.md)"
)


def _fix(kind: str) -> str:
    loop = (
        "run that work once per item with a `subgraph` node in a cycle (one item per "
        "visit, bounded by `max_visits`) instead of a `map`"
    )
    if kind == "a2a":
        return (
            "have the remote agent answer without asking (send what it asks for in the "
            f"message), or call it from an `a2a` node outside the map, or {loop}"
        )
    if kind in ("approval", "wait"):
        return f"move the {kind} node out of the map (before or after it), or {loop}"
    return f"call it from a node outside the map, or {loop}"


def _waits_for(kind: str, exc: GraphInterrupt) -> str:
    """What the interrupt waits for, from its value (the first, if several)."""
    interrupts = exc.args[0] if exc.args else ()
    value: Any = getattr(interrupts[0], "value", None) if interrupts else None
    if not isinstance(value, Mapping):
        return f"this {kind} node waits for a decision"
    if value.get("kind") == "wait":
        return f"this wait node waits until {value.get('until')}"
    if kind == "a2a":
        return f"this a2a node's remote agent asks for input ({value.get('reason')!r})"
    if value.get("kind") == "approval":
        return f"this {kind} node asks for a decision on {value.get('action')!r}"
    if value.get("tool") is not None:
        return f"this {kind} node waits for tool {value.get('tool')!r} (a long-running MCP task)"
    return f"this {kind} node waits for a decision"
