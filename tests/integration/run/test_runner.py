"""The runner on real Postgres: provenance, input checks, threads, failures, limits."""

from __future__ import annotations

import contextlib
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from plait.engine.compiler import CompiledSpec, compile_spec
from plait.engine.run.events import Completed, Failed, Interrupted, NodeFailed, RunEvent
from plait.engine.run.runner import (
    RunRejected,
    ThreadMismatch,
    inspect_thread,
    new_thread_id,
    run_graph,
)
from plait.engine.spec.loader import parse_spec
from plait.engine.store.checkpointer import new_checkpointer
from plait.engine.store.pool import Pool
from plait.server.queue.direct_runs import DirectRunLog, list_runs

HERE = Path(__file__).resolve().parent


def spec(body: str, *, name: str = "runner-test", version: str = "1.0.0") -> CompiledSpec:
    """Compile a spec whose python nodes live in ``runtime_steps.py`` beside this file."""
    text = f"apiVersion: plait/v1\nkind: Graph\nmetadata: {{name: {name}, version: '{version}'}}\n"
    text += "spec:\n" + textwrap.indent(textwrap.dedent(body), "  ")
    return compile_spec(parse_spec(text, f"{name}.yaml", HERE / f"{name}.yaml"))


COUNTER = """
state:
  count: {type: integer, default: 0}
  note: {type: string}
input: [count]
nodes:
  bump:
    kind: python
    function: runtime_steps:increment
    args: {count: state.count}
    output: count
edges:
  - {from: START, to: bump}
  - {from: bump, to: END}
"""


async def collect(compiled: CompiledSpec, pool: Pool, thread: str, **kwargs: Any) -> list[RunEvent]:
    # Recorded as plait run records its runs (the server's table of runs).
    runs = run_graph(compiled, pool, thread, log=DirectRunLog(pool), **kwargs)
    async with contextlib.aclosing(runs) as events:
        return [event async for event in events]


async def test_checkpoints_carry_the_spec_provenance(pool: Pool) -> None:
    compiled = spec(COUNTER)
    thread = new_thread_id()

    events = await collect(compiled, pool, thread, input={"count": 1}, git_sha="abc123")

    assert events[-1] == Completed(output={"count": 2, "note": None})
    graph = compiled.bind(new_checkpointer(pool))
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread}})
    metadata = snapshot.metadata or {}
    assert metadata["plait_graph"] == "runner-test"
    assert metadata["plait_version"] == "1.0.0"
    assert metadata["plait_digest"] == compiled.loaded.digest
    assert metadata["plait_git_sha"] == "abc123"
    assert metadata["run_id"] == events[0].to_dict()["run_id"]
    (run,) = await list_runs(pool, thread)
    assert run.status == "success" and run.ended_at is not None


async def test_cel_sees_the_run(pool: Pool) -> None:
    compiled = spec(
        COUNTER.replace(
            "    output: count",
            "    writes: {count: result, note: \"run.id + ' ' + run.thread_id + ' ' + run.graph\"}",
        )
    )
    thread = new_thread_id()

    events = await collect(compiled, pool, thread, input={"count": 0})

    run_id = events[0].to_dict()["run_id"]
    assert events[-1] == Completed(output={"count": 1, "note": f"{run_id} {thread} runner-test"})


async def test_unknown_input_fields_are_refused(pool: Pool) -> None:
    with pytest.raises(RunRejected, match="unknown input field note; runner-test accepts: count"):
        await collect(spec(COUNTER), pool, new_thread_id(), input={"count": 1, "note": "x"})


async def test_input_of_another_type_than_the_state_declares_is_refused(pool: Pool) -> None:
    with pytest.raises(RunRejected) as refused:
        await collect(spec(COUNTER), pool, new_thread_id(), input={"count": "three"})
    assert str(refused.value) == (
        "input field count is a string ('three'); runner-test's state declares it an integer"
    )
    with pytest.raises(RunRejected) as refused:
        await collect(spec(COUNTER), pool, new_thread_id(), input={"count": None})
    assert str(refused.value) == (
        "input field count is null; runner-test's state declares it an integer "
        "(leave it out: its default)"
    )
    # Left out, it keeps its default.
    events = await collect(spec(COUNTER), pool, new_thread_id(), input={})
    assert events[-1] == Completed(output={"count": 1, "note": None})


async def test_a_thread_continues_only_on_its_digest(pool: Pool) -> None:
    thread = new_thread_id()
    await collect(spec(COUNTER), pool, thread, input={"count": 1})
    changed = spec(COUNTER.replace("default: 0", "default: 5"))

    with pytest.raises(ThreadMismatch) as caught:
        await collect(changed, pool, thread, input={"count": 1})

    message = str(caught.value)
    assert spec(COUNTER).loaded.digest in message and changed.loaded.digest in message
    assert "start a new thread" in message

    newer = spec(COUNTER, version="1.1.0")
    with pytest.raises(ThreadMismatch, match=r'declare `migrations: \[\{from: "1.0.0"'):
        await collect(newer, pool, thread, input={"count": 1})
    migrating = spec(COUNTER + 'migrations:\n  - from: "1.0.0"\n', version="1.1.0")
    with pytest.raises(ThreadMismatch, match=rf"plait upgrade {thread} --to 1\.1\.0"):
        await collect(migrating, pool, thread, input={"count": 1})


async def test_nothing_to_continue_or_resume(pool: Pool) -> None:
    compiled = spec(COUNTER)
    thread = new_thread_id()
    with pytest.raises(RunRejected, match="has no runs yet"):
        await collect(compiled, pool, thread)
    await collect(compiled, pool, thread, input={"count": 0})
    with pytest.raises(RunRejected, match="has finished"):
        await collect(compiled, pool, thread)
    with pytest.raises(RunRejected, match="is not waiting for a decision"):
        await collect(compiled, pool, thread, decisions={"x": {"decision": "approve"}})
    # A finished thread takes a new input: a new run on the same thread.
    events = await collect(compiled, pool, thread, input={"count": 10})
    assert events[-1] == Completed(output={"count": 11, "note": None})


async def test_failed_node_is_pending_and_continues_after_the_fix(
    pool: Pool, tmp_path: Path
) -> None:
    flag = tmp_path / "flag"
    compiled = spec(
        f"""
        state:
          found: {{type: string}}
        input: []
        nodes:
          check:
            kind: python
            function: runtime_steps:require_file
            args: {{path: {json.dumps(json.dumps(str(flag)))}}}
            output: found
        edges:
          - {{from: START, to: check}}
          - {{from: check, to: END}}
        """,
        name="needs-file",
    )
    thread = new_thread_id()

    events = await collect(compiled, pool, thread, input={})

    assert isinstance(events[-2], NodeFailed) and events[-2].node == "check"
    failed = events[-1]
    assert isinstance(failed, Failed) and failed.node == "check"
    assert "is missing" in failed.error
    status = await inspect_thread(compiled, pool, thread, DirectRunLog(pool))
    assert status.state == "pending" and status.next == ["check"]
    assert status.error is not None and "is missing" in status.error

    flag.touch()
    events = await collect(compiled, pool, thread)

    assert events[0].to_dict()["mode"] == "continue"
    assert events[-1] == Completed(output={"found": "found"})
    assert [r.status for r in await list_runs(pool, thread)] == ["error", "success"]


async def test_run_timeout_fails_the_run(pool: Pool) -> None:
    compiled = spec(
        """
        state:
          slept: {type: number}
        input: []
        timeout: 200ms
        nodes:
          slow:
            kind: python
            function: runtime_steps:pause
            args: {seconds: "5.0"}
            output: slept
        edges:
          - {from: START, to: slow}
          - {from: slow, to: END}
        """,
        name="slow",
    )
    thread = new_thread_id()

    events = await collect(compiled, pool, thread, input={})

    failed = events[-1]
    assert isinstance(failed, Failed) and failed.kind == "timeout"
    assert failed.error == "the run exceeded its timeout of 0.2s (spec.timeout)"
    assert [r.status for r in await list_runs(pool, thread)] == ["timeout"]


async def test_max_steps_stops_a_long_run(pool: Pool) -> None:
    compiled = spec(
        """
        state:
          count: {type: integer, default: 0}
        input: []
        max_steps: 3
        nodes:
          a:
            kind: python
            function: runtime_steps:increment
            args: {count: state.count}
            output: count
          b:
            kind: python
            function: runtime_steps:increment
            args: {count: state.count}
            output: count
          c:
            kind: python
            function: runtime_steps:increment
            args: {count: state.count}
            output: count
          d:
            kind: python
            function: runtime_steps:increment
            args: {count: state.count}
            output: count
        edges:
          - {from: START, to: a}
          - {from: a, to: b}
          - {from: b, to: c}
          - {from: c, to: d}
          - {from: d, to: END}
        """,
        name="long",
    )

    events = await collect(compiled, pool, new_thread_id(), input={})

    failed = events[-1]
    assert isinstance(failed, Failed)
    assert failed.error.startswith("the run took more than 3 steps (spec.max_steps)")


async def test_decisions_must_name_a_pending_approval(pool: Pool) -> None:
    compiled = spec(
        """
        state:
          decision: {type: object}
        input: []
        nodes:
          ask: {kind: approval, action: deploy, output: decision}
        edges:
          - {from: START, to: ask}
          - {from: ask, to: END}
        """,
        name="ask",
    )
    thread = new_thread_id()
    events = await collect(compiled, pool, thread, input={})
    interrupt = events[-1]
    assert isinstance(interrupt, Interrupted) and interrupt.payload["action"] == "deploy"

    with pytest.raises(RunRejected, match="no pending approval with id nope"):
        await collect(compiled, pool, thread, decisions={"nope": {"decision": "approve"}})
    with pytest.raises(RunRejected, match="unfinished work"):
        await collect(compiled, pool, thread, input={})

    done = await collect(
        compiled, pool, thread, decisions={interrupt.interrupt_id: {"decision": "reject"}}
    )
    assert done[-1] == Completed(
        output={"decision": {"decision": "reject", "arguments": None, "comment": None}}
    )


async def test_an_abandoned_run_is_recorded(pool: Pool) -> None:
    compiled = spec(COUNTER)
    thread = new_thread_id()
    runs = run_graph(compiled, pool, thread, input={"count": 0}, log=DirectRunLog(pool))
    async with contextlib.aclosing(runs) as events:
        async for _ in events:
            break  # the consumer goes away after the first event
    (run,) = await list_runs(pool, thread)
    assert run.status == "error"
    assert run.error == "the run was abandoned before it ended"
