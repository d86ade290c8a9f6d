"""An MCP server's ``args``/``env`` with per-run values (``{expr: ...}``), over real stdio.

Each distinct set of values gets its own server process; a run with the same
values reuses it; at most ``PER_RUN_SESSIONS`` are kept per server; a value
that is not text fails the node with where it came from. Runs on Postgres.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plait.engine.compiler import CompiledSpec, compile_spec
from plait.engine.run.events import Completed, Failed, RunEvent
from plait.engine.run.runner import new_thread_id, run_graph
from plait.engine.spec.loader import load_spec
from plait.engine.store.pool import Pool
from plait.engine.tools.mcp import hub
from tests.integration.mcp.conftest import SPECS

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {{name: per-run, version: "1.0.0"}}
spec:
  state:
    label: {{type: string}}
    info: {{type: object}}
  input: [label]
  mcp_servers:
    demo:
      transport: stdio
      command: python
      args: [-m, plait_examples.mcp_demo, --label, {{expr: input.label}}]
      env:
        MCP_DEMO_LABEL: {{expr: "run.graph + '/' + input.label"}}
      cwd: {specs}
  tools:
    server_info: {{kind: mcp, server: demo, timeout: 20s}}
  nodes:
    ask: {{kind: tool, tool: server_info, output: info}}
  edges:
    - {{from: START, to: ask}}
    - {{from: ask, to: END}}
"""


GIT_SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {{name: per-run-git, version: "1.0.0"}}
spec:
  state:
    repository: {{type: string}}
    target: {{type: string}}
    status: {{type: any}}
  input: [repository, target]
  mcp_servers:
    git:
      transport: stdio
      command: {command}
      args: [--repository, {{expr: input.repository}}]
  tools:
    git_status: {{kind: mcp, server: git, timeout: 20s}}
  nodes:
    status: {{kind: tool, tool: git_status, args: {{repo_path: input.target}}, output: status}}
  edges:
    - {{from: START, to: status}}
    - {{from: status, to: END}}
"""


@pytest.fixture
def compiled(tmp_path: Path) -> CompiledSpec:
    """The spec, in a folder of its own: its server's sessions are this test's alone."""
    path = tmp_path / "per-run.yaml"
    path.write_text(SPEC.format(specs=SPECS))
    return compile_spec(load_spec(path))


async def run(compiled: CompiledSpec, pool: Pool, label: Any) -> list[RunEvent]:
    async with contextlib.aclosing(
        run_graph(compiled, pool, new_thread_id(), input={"label": label})
    ) as events:
        return [event async for event in events]


async def info(compiled: CompiledSpec, pool: Pool, label: str) -> dict[str, Any]:
    events = await run(compiled, pool, label)
    completed = events[-1]
    assert isinstance(completed, Completed), completed
    found: dict[str, Any] = completed.output["info"]
    return found


async def gone(pid: int) -> bool:
    """Whether process ``pid`` has exited (polled until it has, up to 15 s)."""
    async with asyncio.timeout(15):
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            await asyncio.sleep(0.05)


async def test_each_run_reaches_the_server_of_its_own_values(
    compiled: CompiledSpec, pool: Pool
) -> None:
    first = await info(compiled, pool, "alpha")
    assert first["label"] == "alpha"  # the argument, computed for the run
    assert first["env_label"] == "per-run/alpha"  # the environment variable, from input and run
    second = await info(compiled, pool, "beta")
    assert (second["label"], second["env_label"]) == ("beta", "per-run/beta")
    assert second["pid"] != first["pid"]  # another value: another process
    again = await info(compiled, pool, "alpha")
    assert again == first  # the same values: the same session, still open


async def test_least_recently_used_sessions_close_beyond_the_cap(
    compiled: CompiledSpec, pool: Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub, "PER_RUN_SESSIONS", 2)
    first = await info(compiled, pool, "one")
    second = await info(compiled, pool, "two")
    await info(compiled, pool, "three")  # a third session: "one", used longest ago, closes
    assert await gone(first["pid"])
    assert (await info(compiled, pool, "two"))["pid"] == second["pid"]
    reopened = await info(compiled, pool, "one")
    assert reopened["label"] == "one" and reopened["pid"] != first["pid"]


async def test_a_value_that_is_not_text_fails_the_node_saying_where(
    compiled: CompiledSpec, pool: Pool
) -> None:
    # A null label is refused as input now (its state says string): one left out is null too.
    started = run_graph(compiled, pool, new_thread_id(), input={})
    async with contextlib.aclosing(started) as stream:
        events = [event async for event in stream]
    failed = events[-1]
    assert isinstance(failed, Failed), failed
    assert "MCP server 'demo': args[3] (input.label) gave null" in failed.error
    assert failed.node == "ask"


def _repository(folder: Path, file: str) -> Path:
    """A git repository in ``folder`` with ``file`` changed since its first commit."""
    folder.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git(
        "-c",
        "user.email=t@example.com",
        "-c",
        "user.name=T",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "start",
    )
    (folder / file).write_text("new\n")
    return folder


async def test_mcp_server_git_is_confined_to_each_runs_repository(
    tmp_path: Path, pool: Pool
) -> None:
    path = tmp_path / "per-run-git.yaml"
    path.write_text(GIT_SPEC.format(command=Path(sys.executable).parent / "mcp-server-git"))
    compiled = compile_spec(load_spec(path))
    first = await asyncio.to_thread(_repository, tmp_path / "first", "first.txt")
    second = await asyncio.to_thread(_repository, tmp_path / "second", "second.txt")

    async def status(repository: Path, target: Path) -> RunEvent:
        inputs = {"repository": str(repository), "target": str(target)}
        async with contextlib.aclosing(
            run_graph(compiled, pool, new_thread_id(), input=inputs)
        ) as events:
            return [event async for event in events][-1]

    ended = await status(first, first)
    assert isinstance(ended, Completed) and "first.txt" in str(ended.output["status"])
    ended = await status(second, second)
    assert isinstance(ended, Completed) and "second.txt" in str(ended.output["status"])
    # The second run's server was started with --repository of the second: the first is outside.
    ended = await status(second, first)
    assert isinstance(ended, Failed), ended
    assert "outside the allowed repository" in ended.error
