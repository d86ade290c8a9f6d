"""Where a node runs among subgraphs: the path a recording keeps its calls under.

A top-level node's path is its id (``file_claim``). Inside a ``subgraph`` node the
path is prefixed by that node's id (``office/desk/file_claim``: node ``desk`` of the
child that node ``office`` runs); inside the subgraph of a ``map`` item, by the
map's id and the item's index (``claims[1]/file_claim``). Node ids are identifiers
(letters, digits and ``_``), so ``/`` and ``[...]`` never occur inside one: a path
names one place whatever the depth, and two items of one map never share one.

The enclosing nodes are known to the code that runs the child
(``engine/compiler/nodes/subgraph.py``), which enters :func:`within` around it; the
nodes inside read :func:`node_path`. A context variable carries it, as LangGraph runs
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


def node_path(node_id: str) -> str:
    """The path of node ``node_id`` where it runs now (its id at the top level)."""
    return "/".join((*_WITHIN.get(), node_id))


#: A map item's segment: the map's id and the item's index.
_ITEM = re.compile(r"(\w+)\[(\d+)\]")


def map_item() -> tuple[str, int] | None:
    """The innermost map item the running code is in (its subgraph): the map's id and the
    item's index; ``None`` outside map items' subgraphs."""
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
