"""Every example spec, run compiled and ejected with the same input, replies and decisions.

The compiled run goes through Plait's run driver on real Postgres, as the
examples' own tests run it; the ejected module is imported from the file
``plait eject`` wrote and run by LangGraph alone (an in-memory checkpointer).
Both must start the same nodes in the same order, announce the same tool calls,
map items and model routes, and end in the same state.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from plait.engine.compiler import compile_spec
from plait.engine.eject import NotEjectable, eject
from plait.engine.run.events import Custom
from plait.engine.run.spec_tests import with_replies
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.loader import load_spec
from plait.engine.spec.validate import load_directory
from plait.engine.store.checkpointer import new_checkpointer
from plait.engine.store.pool import Pool
from tests.integration.examples.conftest import SPECS, Runner, compiled

#: Per spec, what does not map (``plait eject`` refuses it without ``--partial``).
REFUSED = {
    "a2a-expense-agent": ["spec.a2a: serving the graph over A2A"],
    "a2a-expense-caller": ["spec.nodes.file_claim: a2a node"],
    "mcp-tools": [
        "spec.tools.open_ticket: non-idempotent calls",
        "spec.nodes.help: MCP tools (lookup_order, open_ticket)",
        "spec.nodes.report: MCP tools (slow_report)",
    ],
    "refund-approval": ["spec.evaluation: graders"],
    "support-triage": ["spec.audit: audit of model calls"],
}
#: Specs whose first node is a stub in a partial ejection: the run stops there, naming it.
STUBBED = {"a2a-expense-caller": "file_claim: a2a node", "mcp-tools": "help: MCP tools"}


def _cases() -> list[Any]:
    cases = []
    for path in sorted(SPECS.glob("*.yaml")):
        cases += [
            pytest.param(path.stem, example.name, id=f"{path.stem}:{example.name}")
            for example in load_spec(path).spec.spec.examples
        ]
    return cases


def _loaded(name: str, example: str | None = None) -> LoadedSpec:
    """The spec, with an example's own model replies when it gives some (as `plait test`)."""
    loaded = load_spec(SPECS / f"{name}.yaml")
    chosen = [e for e in loaded.spec.spec.examples if e.name == example]
    return with_replies(loaded, chosen[0]) if chosen else loaded


def _ejected(name: str, folder: Path, *, partial: bool, example: str | None = None) -> ModuleType:
    target = folder / f"{name.replace('-', '_')}.py"
    target.write_text(
        eject(_loaded(name, example), load_directory(SPECS), target=target, partial=partial)
    )
    module_spec = importlib.util.spec_from_file_location(f"ejected_{target.stem}", target)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


async def _run_ejected(
    module: ModuleType, given: dict[str, Any], decisions: list[dict[str, Any]]
) -> tuple[list[str], dict[str, Any], list[dict[str, Any]]]:
    graph = module.build_graph(InMemorySaver())
    config: Any = {"configurable": {"thread_id": str(uuid.uuid4())}}
    update: Any = module.initial_state(given)
    started: list[str] = []
    custom: list[dict[str, Any]] = []
    queue = list(decisions)
    while True:
        asked = False
        modes = ["tasks", "updates", "custom"]
        async for mode, chunk in graph.astream(update, config, stream_mode=modes):
            if mode == "tasks" and "input" in chunk:
                started.append(chunk["name"])
            elif mode == "custom":
                custom.append(chunk)
            elif mode == "updates" and "__interrupt__" in chunk:
                asked = True
        if not asked or not queue:
            break
        update = Command(resume=queue.pop(0))
    values = (await graph.aget_state(config)).values
    return started, {k: v for k, v in values.items() if not k.startswith("_")}, custom


def _events(custom: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Plait's custom events (tool calls, map items, model routes...) by what they say,
    in a stable order (map items finish in any order)."""
    keys = ("plait", "node", "tool", "status", "index", "ok", "model")
    return sorted(tuple(str(event.get(key)) for key in keys) for event in custom)


def _plain(value: Any) -> Any:
    """Values as a user compares them: messages by type, content and tool calls (their ids
    are random per run)."""
    if isinstance(value, BaseMessage):
        calls = [(c["name"], c["args"]) for c in getattr(value, "tool_calls", [])]
        return (value.type, value.content, calls)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@pytest.mark.parametrize(("name", "example"), _cases())
async def test_an_ejected_example_runs_as_the_spec_does(
    name: str, example: str, run_example: Runner, pool: Pool, tmp_path: Path
) -> None:
    if name in REFUSED:
        with pytest.raises(NotEjectable) as refused:
            _ejected(name, tmp_path, partial=False)
        assert [f"{p.where}: {p.feature}" for p in refused.value.problems] == REFUSED[name]
        assert all(line in str(refused.value) for line in REFUSED[name])
    module = _ejected(name, tmp_path, partial=name in REFUSED, example=example)
    chosen = next(e for e in compiled(name).spec.spec.examples if e.name == example)
    decisions = [d.model_dump() for d in chosen.decisions]
    if name in STUBBED:
        with pytest.raises(NotImplementedError, match=STUBBED[name]):
            await _run_ejected(module, chosen.input, decisions)
        return

    spec = compile_spec(_loaded(name, example), load_directory(SPECS))
    outcome = await run_example(name, example=example, spec=spec)
    snapshot = await spec.bind(new_checkpointer(pool)).aget_state(
        {"configurable": {"thread_id": outcome.thread_id}}
    )
    started, state, custom = await _run_ejected(module, chosen.input, decisions)

    assert started == outcome.started
    assert _events(custom) == _events([e.data for e in outcome.events if isinstance(e, Custom)])
    assert _plain(state) == _plain(snapshot.values)
    assert set(outcome.output) == set(module.Output.__annotations__)


def test_the_ejected_modules_pass_ruff(tmp_path: Path) -> None:
    for path in sorted(SPECS.glob("*.yaml")):
        _ejected(path.stem, tmp_path, partial=True)
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--isolated",
            "--line-length=100",
            "--select=E,F,W,I,B,UP,SIM,RUF,ASYNC",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,  # outside this repository, where `plait` is a third-party package
    )
    assert checked.returncode == 0, checked.stdout
