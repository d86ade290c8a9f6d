"""After a tool timeout and a run timeout nothing is left running: no asyncio task,
no subprocess, no database connection in use; nor after a run that ends on its own."""

from __future__ import annotations

import asyncio
import contextlib
import os
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from plait.engine.compiler import CompiledSpec, compile_spec
from plait.engine.run.events import Completed, Failed, Interrupted, RunEvent
from plait.engine.run.runner import new_thread_id, run_graph
from plait.engine.spec.loader import parse_spec
from plait.engine.store.pool import Pool, open_pool

HERE = Path(__file__).resolve().parent


def _spec(name: str, body: str) -> CompiledSpec:
    text = f"apiVersion: plait/v1\nkind: Graph\nmetadata: {{name: {name}, version: '1.0.0'}}\n"
    text += "spec:\n" + textwrap.indent(textwrap.dedent(body), "  ")
    return compile_spec(parse_spec(text, f"{name}.yaml", HERE / f"{name}.yaml"))


TOOL_TIMEOUT = """
state:
  pid_file: {type: string}
  out: {}
tools:
  command: {function: "plait_timeout_tools:run_command", timeout: 300ms}
nodes:
  run:
    kind: tool
    tool: command
    args: {pid_file: state.pid_file}
    output: out
edges:
  - {from: START, to: run}
  - {from: run, to: END}
"""

RUN_TIMEOUT = """
state:
  pid_file: {type: string}
  out: {}
timeout: 300ms
tools:
  command: {function: "plait_timeout_tools:run_command"}
nodes:
  run:
    kind: agent
    model: m
    tools: [command]
    prompt: go
    output: out
models:
  m:
    provider: scripted
    script:
      - tool_calls: [{name: command, args: {pid_file: "{pid_file}"}}]
      - content: finished
edges:
  - {from: START, to: run}
  - {from: run, to: END}
"""


@pytest.fixture
async def own_pool(database_url: str, pool: Pool) -> AsyncIterator[Pool]:
    """A pool of this test's own (on the migrated database), so its statistics are the run's."""
    async with await open_pool(database_url, min_size=1, max_size=4) as opened:
        yield opened


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _run(compiled: CompiledSpec, pool: Pool, pid_file: Path) -> Failed:
    thread = new_thread_id()
    events: list[RunEvent] = []
    async with contextlib.aclosing(
        run_graph(compiled, pool, thread, input={"pid_file": str(pid_file)})
    ) as stream:
        events = [event async for event in stream]
    failed = events[-1]
    assert isinstance(failed, Failed)
    return failed


@pytest.mark.parametrize(
    ("body", "kind", "error"),
    [
        (TOOL_TIMEOUT, "error", "tool 'command' timed out after 0.3s"),
        (RUN_TIMEOUT, "timeout", "the run exceeded its timeout of 0.3s (spec.timeout)"),
    ],
    ids=["tool-timeout", "run-timeout"],
)
async def test_a_timeout_leaves_nothing_running(
    own_pool: Pool, tmp_path: Path, body: str, kind: str, error: str
) -> None:
    pid_file = tmp_path / "pid"
    compiled = _spec(f"leak-{kind}", body.replace("{pid_file}", str(pid_file)))
    pool = own_pool
    before = asyncio.all_tasks()
    failed = await _run(compiled, pool, pid_file)
    assert failed.kind == kind
    assert error in failed.error

    # The subprocess was started, and is gone (killed and reaped).
    pid = int(pid_file.read_text())
    assert not _alive(pid)
    # No task the run started is still pending.
    leftover = [t for t in asyncio.all_tasks() - before if not t.done()]
    assert leftover == []
    # Every connection is back in the pool, and none is busy on the server.
    stats = pool.get_stats()
    assert stats["pool_available"] == stats["pool_size"]
    async with pool.connection() as conn:
        row = await (
            await conn.execute(
                "select count(*) as busy from pg_stat_activity "
                "where datname = current_database() and state <> 'idle' "
                "and pid <> pg_backend_pid()"
            )
        ).fetchone()
    assert row is not None and row["busy"] == 0


SUCCEEDS = """
state:
  pid_file: {type: string}
  out: {type: string}
  decision: {type: object}
models:
  m:
    provider: scripted
    script: [{content: one}, {content: two}, {content: three}]
nodes:
  first: {kind: llm, model: m, prompt: go, output: out}
  second: {kind: llm, model: m, prompt: go, output: out}
  third: {kind: llm, model: m, prompt: go, output: out}
edges:
  - {from: START, to: first}
  - {from: first, to: second}
  - {from: second, to: third}
  - {from: third, to: END}
"""

PARKS = """
state:
  pid_file: {type: string}
  decision: {type: object}
nodes:
  ask: {kind: approval, action: proceed, reason: "a person decides", output: decision}
edges:
  - {from: START, to: ask}
  - {from: ask, to: END}
"""


@pytest.mark.parametrize(
    ("body", "last"), [(SUCCEEDS, Completed), (PARKS, Interrupted)], ids=["succeeds", "parks"]
)
async def test_a_run_that_ends_on_its_own_leaves_nothing_writing(
    own_pool: Pool, tmp_path: Path, body: str, last: type[RunEvent]
) -> None:
    # The driver searches for a saver's leftover writes only after a stopped run
    # (engine/run/driver.py): this is what lets it skip the search otherwise.
    compiled = _spec(f"ends-{last.__name__.lower()}", body)
    before = asyncio.all_tasks()
    async with contextlib.aclosing(
        run_graph(compiled, own_pool, new_thread_id(), input={"pid_file": str(tmp_path)})
    ) as stream:
        events = [event async for event in stream]
    assert isinstance(events[-1], last)
    leftover = [t for t in asyncio.all_tasks() - before if not t.done()]
    assert leftover == []
    stats = own_pool.get_stats()
    assert stats["pool_available"] == stats["pool_size"]
