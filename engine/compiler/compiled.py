"""What compiling a spec gives: the builder and the graphs, ready to bind to a checkpointer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.models import GraphSpec

Graph = CompiledStateGraph[Any, Any, Any, Any]


@dataclass(frozen=True, eq=False)
class CompiledSpec:
    """A spec compiled once: the builder, and a graph with no checkpointer of its own.

    ``graph`` inherits the caller's checkpointer when it runs nested in another
    graph; ``detached`` never checkpoints (map items).
    """

    loaded: LoadedSpec
    digest: str
    builder: StateGraph[Any, Any, Any, Any]
    graph: Graph
    detached: Graph
    input_fields: tuple[str, ...]
    output_fields: tuple[str, ...]
    #: The specs its ``subgraph`` nodes and map items run, compiled, by ref (``name@version``).
    children: Mapping[str, CompiledSpec] = field(default_factory=dict)

    @property
    def spec(self) -> GraphSpec:
        return self.loaded.spec

    def nested(self, ref: str) -> LoadedSpec | None:
        """The spec ``ref`` names among those this one runs, at any depth (``None``: none)."""
        pending = [self]
        seen: set[str] = set()
        while pending:
            for name, child in pending.pop().children.items():
                if name == ref:
                    return child.loaded
                if name not in seen:
                    seen.add(name)
                    pending.append(child)
        return None

    def bind(
        self, checkpointer: BaseCheckpointSaver[Any] | None, store: BaseStore | None = None
    ) -> Graph:
        """The graph with ``checkpointer`` and LangGraph's long-term ``store`` (what
        ``get_store()`` answers in its nodes): a shallow copy, no recompilation (~µs)."""
        # ``copy`` re-runs the constructor; validation already ran when compiled.
        return self.graph.copy(
            {"checkpointer": checkpointer, "store": store, "auto_validate": False}
        )
