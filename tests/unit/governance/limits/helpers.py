"""Specs for the runtime-limit tests, with this folder's tools, and their events."""

from __future__ import annotations

import itertools
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.loader import parse_spec
from plait.engine.tools.python_tools import import_function
from tests.unit.compiler.helpers import Runner

FIXTURES = Path(__file__).parent / "fixtures_py"
FNS = "plait_limits_fns"
_names = itertools.count()


def limits_spec(
    nodes: dict[str, Any], edges: list[dict[str, Any]], state: dict[str, Any], **body: Any
) -> LoadedSpec:
    """A spec whose python refs resolve in ``fixtures_py``."""
    name = f"limits{next(_names)}"
    data = {
        "apiVersion": "plait/v1",
        "kind": "Graph",
        "metadata": {"name": name, "version": "1.0.0"},
        "spec": {"state": state, "nodes": nodes, "edges": edges, **body},
    }
    return parse_spec(json.dumps(data), f"{name}.yaml", FIXTURES / f"{name}.yaml")


async def events_of(
    runner: Runner, payload: Any, kind: str
) -> tuple[list[dict[str, Any]], Exception | None]:
    """The ``{"plait": kind}`` events of one run, and the error it ended with."""
    events: list[dict[str, Any]] = []
    try:
        async for chunk in runner.graph.astream(payload, runner.config, stream_mode="custom"):
            if isinstance(chunk, dict) and chunk.get("plait") == kind:
                events.append(chunk)
    except Exception as exc:
        return events, exc
    return events, None


def tool_calls() -> Counter[str]:
    """Calls per key of the fixture tools, from the module the specs import."""
    import_function(f"{FNS}:echo", FIXTURES)
    module = sys.modules[FNS]
    counts: Counter[str] = module.CALLS
    return counts
