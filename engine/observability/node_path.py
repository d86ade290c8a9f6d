"""Where a node runs among subgraphs: the path a recording keeps its calls under.

A top-level node's path is its id (``file_claim``). Inside a ``subgraph`` node the
path is prefixed by that node's id (``office/desk/file_claim``: node ``desk`` of the
child that node ``office`` runs); inside the subgraph of a ``map`` item, by the
map's id and the item's index (``claims[1]/file_claim``). The calls a map item makes
itself (a map whose ``do`` is an ``llm``, ``agent`` or ``tool``) are the item's, at
``claims[1]``: the map's path with the item's index. Node ids are identifiers
(letters, digits and ``_``), so ``/`` and ``[...]`` never occur inside one: a path
names one place whatever the depth, and two items of one map never share one.

The enclosing nodes are known to the code that runs the child
(``engine/compiler/nodes/subgraph.py``), which enters :func:`within` around it; the
nodes inside read :func:`node_path`. A map enters :func:`map_item_work` around each
item's work (``engine/compiler/nodes/map.py``), so the map's own calls there read
its item's path. A context variable carries it, as LangGraph runs
a child's steps in tasks of the task that invoked the child (and a resumed child is
invoked again by its parent node, which enters it again).

Model calls (their audit record), tool calls (their result's record) and ``a2a``
nodes (their turn records) note it, and a replay asks its recording by it
(``engine/tools/cassette.py``). It lives with the other context of the running code
(``roles.py``), below the tools and the compiler that read it.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar

#: The enclosing nodes' segments, outermost first (empty at the top level).
_WITHIN: ContextVar[tuple[str, ...]] = ContextVar("plait_node_path", default=())
#: The map item whose own work runs here: the enclosing segments it runs in, the map's id
#: and the item's index. Kept with those segments so that it holds only at that level: a
#: child the work runs (a subgraph) is a level down, where the map's id is another node's.
_ITEM_WORK: ContextVar[tuple[tuple[str, ...], str, int] | None] = ContextVar(
    "plait_map_item_work", default=None
)


def node_path(node_id: str) -> str:
    """The path of node ``node_id`` where it runs now (its id at the top level; a map's
    ``map_id[i]`` in the work of its item ``i``)."""
    enclosing = _WITHIN.get()
    work = _ITEM_WORK.get()
    if work is not None and work[0] == enclosing and work[1] == node_id:
        return item_path(node_id, work[2])
    return "/".join((*enclosing, node_id))


def item_path(map_id: str, index: int) -> str:
    """The path of item ``index`` of map ``map_id`` where the map runs now (``claims[1]``),
    also from inside the item's work."""
    return "/".join((*_WITHIN.get(), segment(map_id, index)))


#: A map item's segment: the map's id and the item's index.
_ITEM = re.compile(r"(\w+)\[(\d+)\]")


def map_item() -> tuple[str, int] | None:
    """The innermost map item the running code is in (its subgraph): the map's id and the
    item's index; ``None`` outside map items' subgraphs, and in an item's own work (the map
    turns what waits there into its item's error itself: ``engine/compiler/nodes/waits.py``)."""
    for outer in reversed(_WITHIN.get()):
        found = _ITEM.fullmatch(outer)
        if found is not None:
            return found[1], int(found[2])
    return None


def segment(node_id: str, index: int | None = None) -> str:
    """One enclosing node: its id, with the item's index when it is a map's item."""
    return node_id if index is None else f"{node_id}[{index}]"


@contextlib.contextmanager
def within(node_id: str, index: int | None = None) -> Iterator[None]:
    """Run what is inside as the child of node ``node_id`` (item ``index`` of a map)."""
    token = _WITHIN.set((*_WITHIN.get(), segment(node_id, index)))
    try:
        yield
    finally:
        _WITHIN.reset(token)


@contextlib.contextmanager
def map_item_work(map_id: str, index: int) -> Iterator[None]:
    """Run what is inside as item ``index`` of map ``map_id``: the calls the map makes
    there (its ``llm``, ``agent`` or ``tool`` items) are at path ``map_id[index]``, apart
    from the other items' calls running at once."""
    token = _ITEM_WORK.set((_WITHIN.get(), map_id, index))
    try:
        yield
    finally:
        _ITEM_WORK.reset(token)
