"""Build specs from dicts and run them on an in-memory checkpointer."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from plait.engine.compiler import CompiledSpec, compile_spec
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.loader import parse_spec
from plait.engine.spec.registry import SpecRegistry

#: The spec "folder": python refs resolve against it.
FIXTURES = Path(__file__).parent / "fixtures_py"
_names = itertools.count()


def make_spec(
    nodes: dict[str, Any],
    edges: list[dict[str, Any]],
    state: dict[str, Any] | None = None,
    *,
    name: str | None = None,
    version: str = "1.0.0",
    **body: Any,
) -> LoadedSpec:
    """A spec through the real loader (JSON is YAML), unique per call unless ``name`` is given."""
    name = name or f"t{next(_names)}"
    data = {
        "apiVersion": "plait/v1",
        "kind": "Graph",
        "metadata": {"name": name, "version": version},
        "spec": {"state": state or {}, "nodes": nodes, "edges": edges, **body},
    }
    return parse_spec(json.dumps(data), f"{name}.yaml", FIXTURES / f"{name}.yaml")


def chain(*node_ids: str) -> list[dict[str, str]]:
    """Static edges START -> a -> b -> ... -> END."""
    path = ["START", *node_ids, "END"]
    return [{"from": a, "to": b} for a, b in itertools.pairwise(path)]


def scripted(*replies: dict[str, Any]) -> dict[str, Any]:
    """A scripted model definition."""
    return {"provider": "scripted", "script": list(replies)}


class Runner:
    """One compiled spec on one in-memory thread."""

    def __init__(
        self, loaded: LoadedSpec, registry: SpecRegistry | None = None, thread: str = "t"
    ) -> None:
        self.compiled: CompiledSpec = compile_spec(loaded, registry)
        self.saver = InMemorySaver()
        self.graph = self.compiled.bind(self.saver)
        self.config: dict[str, Any] = {
            "configurable": {"thread_id": thread},
            "metadata": {"plait_graph": loaded.name, "plait_version": loaded.version},
        }

    async def start(self, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        return dict(await self.graph.ainvoke(payload or {}, self.config))

    async def resume(self, value: Any) -> dict[str, Any]:
        return dict(await self.graph.ainvoke(Command(resume=value), self.config))

    async def state(self) -> dict[str, Any]:
        return dict((await self.graph.aget_state(self.config)).values)


async def run(loaded: LoadedSpec, payload: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run to the end (or the first interrupt) and return the output."""
    return await Runner(loaded).start(payload)
