"""Where a spec's nodes run among its subgraphs, read from the specs (nothing runs).

A running node has a path (``engine/observability/node_path.py``): its id at the top
level, ``office/desk/file_claim`` inside the spec node ``desk`` runs, itself inside
the spec top-level node ``office`` runs, and ``claims[1]/file_claim`` in the subgraph
item 1 of map ``claims`` runs. :func:`places` lists every node of a spec and of the
specs its ``subgraph`` nodes and map items run, each with the nodes around it. An
item's index is known only when it runs: statically the place is ``claims[i]/...``.

Lint reads it (what waits for a person inside a map item's subgraph) and so does
``plait record`` (where a node that ran before paths were recorded ran).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.models import MapNode, Node, SubgraphNode

#: The spec a ref names, or ``None`` when it names none (lint reports that elsewhere).
Resolve = Callable[[str], LoadedSpec | None]


@dataclass(frozen=True)
class Enclosing:
    """A node whose child a place is in: a ``subgraph`` node, or the items of a ``map``."""

    node_id: str
    #: The spec it runs (``name@version``).
    ref: str
    #: Whether it is a map's item (its index known only when it runs).
    item: bool = False

    @property
    def segment(self) -> str:
        """Its part of a path: the id, with ``[i]`` for a map's items."""
        return f"{self.node_id}[i]" if self.item else self.node_id


@dataclass(frozen=True)
class Place:
    """One node where it runs: the nodes around it (outermost first), and the spec it is in."""

    within: tuple[Enclosing, ...]
    node_id: str
    node: Node
    spec: LoadedSpec

    @property
    def path(self) -> str:
        """``office/desk/file_claim``; ``claims[i]/file_claim`` inside a map's item."""
        return "/".join((*(outer.segment for outer in self.within), self.node_id))

    @property
    def item_of(self) -> Enclosing | None:
        """The outermost map whose items it runs in, if any."""
        return next((outer for outer in self.within if outer.item), None)


def places(loaded: LoadedSpec, resolve: Resolve) -> Iterator[Place]:
    """Every node of ``loaded`` and, under each ``subgraph`` node and map of a subgraph,
    of the spec it runs (depth first). A ref that does not resolve, or that leads back
    to a spec it is inside of, is not followed."""
    yield from _places(loaded, resolve, (), (loaded.ref,))


def _places(
    loaded: LoadedSpec, resolve: Resolve, within: tuple[Enclosing, ...], refs: tuple[str, ...]
) -> Iterator[Place]:
    for node_id, node in loaded.spec.spec.nodes.items():
        yield Place(within, node_id, node, loaded)
        if isinstance(node, SubgraphNode):
            outer = Enclosing(node_id, node.ref)
        elif isinstance(node, MapNode) and node.do.kind == "subgraph" and node.do.ref is not None:
            outer = Enclosing(node_id, node.do.ref, item=True)
        else:
            continue
        child = resolve(outer.ref) if outer.ref not in refs else None
        if child is not None:
            yield from _places(child, resolve, (*within, outer), (*refs, outer.ref))
