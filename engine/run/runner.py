"""Run a compiled spec on a thread and yield typed events.

One call of :func:`run_graph` is one *run*: a fresh input, a resume with
decisions for pending approvals, or a continuation of a thread whose last run
stopped mid-way (crash, kill, failed node). Each run gets its own checkpointer
(the Postgres saver serialises its calls, so it is never shared); given a
record keeper (:class:`~plait.engine.run.records.RunLog`), it records itself
there and refuses a thread started on another digest.

The stream's items become run events through
:mod:`plait.engine.run.stream_items`; interrupts and the output are read from
the thread's state once the stream ends, which also covers interrupts raised
inside subgraphs.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from langgraph.errors import GraphRecursionError
from langgraph.types import Command, StateSnapshot

from plait.engine.governance.tool_limits import ToolLimiter
from plait.engine.observability import tracing
from plait.engine.run.context import RunContext
from plait.engine.run.driver import Item, RunTimedOut, drive
from plait.engine.run.events import (
    Completed,
    Failed,
    Interrupted,
    RunEvent,
    RunStarted,
)
from plait.engine.run.inputs import input_problems
from plait.engine.run.marks import RunMarks
from plait.engine.run.records import RunLog, ThreadRecord, ThreadSpecMismatch
from plait.engine.run.states import RunState, state_label, waiting_on
from plait.engine.run.stream_items import EventsOfItems, error_text, subgraph_maps
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.expressions import to_plain
from plait.engine.spec.migrations import find_migration, migration_hint
from plait.engine.spec.models import GraphSpec, duration_seconds
from plait.engine.store.audit import PostgresAuditStore
from plait.engine.store.checkpointer import new_checkpointer
from plait.engine.store.pool import Pool
from plait.engine.store.tool_results import PostgresToolResultStore

STREAM_MODES = ["tasks", "messages", "custom"]


class CompiledGraph(Protocol):
    """What the runner needs of ``plait.engine.compiler.CompiledSpec``."""

    @property
    def loaded(self) -> LoadedSpec: ...

    def nested(self, ref: str) -> LoadedSpec | None: ...

    def bind(self, checkpointer: Any) -> Any: ...


class RunRejected(Exception):
    """A run that cannot start: bad input, a thread on another spec, nothing to continue."""


class ThreadMismatch(RunRejected):
    """The thread was started on another graph, version or digest."""


@dataclass(frozen=True)
class ThreadPosition:
    """Where a thread stands, read from its last checkpoint.

    ``state`` is ``new`` (no checkpoint), ``interrupted`` (waiting for
    decisions), ``pending`` (stopped mid-way: killed, crashed or a node
    failed; ``error`` says which), or ``finished`` (reached END).
    """

    thread_id: str
    state: Literal["new", "interrupted", "pending", "finished"]
    next: list[str] = field(default_factory=list)
    interrupts: list[Interrupted] = field(default_factory=list)
    error: str | None = None
    values: dict[str, Any] = field(default_factory=dict)


def new_thread_id() -> str:
    """A fresh thread id."""
    return str(uuid.uuid4())


def check_input(spec: GraphSpec, data: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``data`` if ``spec`` accepts it as its input, else raise :class:`RunRejected`
    saying why (:func:`~plait.engine.run.inputs.input_problems`)."""
    problems = input_problems(spec, data)
    if problems:
        raise RunRejected("; ".join(problems))
    return dict(data)


async def check_thread(log: RunLog, thread_id: str, loaded: LoadedSpec) -> None:
    """Raise :class:`ThreadMismatch` when ``log`` says the thread was started on
    another spec or digest (a thread it does not know is new)."""
    existing = await log.get_thread(thread_id)
    if existing is not None and (existing.graph, existing.version, existing.digest) != (
        loaded.name,
        loaded.version,
        loaded.digest,
    ):
        raise ThreadMismatch(_mismatch_message(existing, loaded))


async def inspect_thread(
    compiled: CompiledGraph, pool: Pool, thread_id: str, log: RunLog | None = None
) -> ThreadPosition:
    """Read where ``thread_id`` stands (see :class:`ThreadPosition`); checks its digest
    first when there is a ``log``."""
    if log is not None:
        await check_thread(log, thread_id, compiled.loaded)
    graph = compiled.bind(new_checkpointer(pool))
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    return _status(thread_id, snapshot)


async def run_graph(
    compiled: CompiledGraph,
    pool: Pool,
    thread_id: str,
    *,
    input: Mapping[str, Any] | None = None,
    decisions: Mapping[str, Any] | None = None,
    git_sha: str | None = None,
    log: RunLog | None = None,
) -> AsyncGenerator[RunEvent, None]:
    """Run ``compiled`` on ``thread_id`` and yield its events.

    Give ``input`` to start a run, ``decisions`` (``{interrupt_id: decision}``)
    to resume a thread waiting on approvals, or neither to continue a thread
    that stopped mid-way from its last checkpoint. Raises :class:`RunRejected`
    before anything runs when that does not fit the thread; every failure
    after the start is a :class:`Failed` event, the last one yielded. With a
    ``log`` the thread is pinned to the spec and the run recorded there.
    """
    if input is not None and decisions is not None:
        raise RunRejected("give either an input or decisions, not both")
    loaded = compiled.loaded
    status = await inspect_thread(compiled, pool, thread_id, log)
    payload: Any
    mode: Literal["start", "resume", "continue"]
    if input is not None:
        payload, mode = check_input(loaded.spec, input), "start"
        if status.state in ("interrupted", "pending"):
            raise RunRejected(
                f"thread {thread_id} has unfinished work ({status.state}); "
                "resume or continue it instead of giving a new input"
            )
    elif decisions is not None:
        payload, mode = Command(resume=dict(decisions)), "resume"
        _check_decisions(status, decisions)
    else:
        payload, mode = None, "continue"
        if status.state != "pending":
            raise RunRejected(_nothing_to_continue(status))

    run_id = str(uuid.uuid4())
    if log is not None:
        try:
            thread = await log.claim_thread(
                thread_id,
                graph=loaded.name,
                version=loaded.version,
                digest=loaded.digest,
                git_sha=git_sha,
            )
        except ThreadSpecMismatch as exc:
            raise ThreadMismatch(_mismatch_message(exc.existing, loaded)) from None
        await log.start_run(run_id, thread)
    checkpointer = new_checkpointer(pool)
    graph = compiled.bind(checkpointer)
    config = RunContext(
        loaded,
        thread_id,
        run_id,
        git_sha=git_sha,
        # Tool results recorded in Postgres: a continued run reuses the calls that
        # finished before the process died instead of calling the tools again.
        tool_results=PostgresToolResultStore(pool),
        audit=PostgresAuditStore(pool),
        # The operator's own runs: tenant `default`, as a server's runs without keys.
        tool_limiter=ToolLimiter(pool, "default"),
    ).config()
    timeout = duration_seconds(loaded.spec.spec.timeout) if loaded.spec.spec.timeout else None
    outcome: RunState = "failed"
    error: str | None = "the run was abandoned before it ended"
    marks = RunMarks()
    try:
        yield RunStarted(
            run_id=run_id,
            thread_id=thread_id,
            graph=loaded.name,
            version=loaded.version,
            digest=loaded.digest,
            mode=mode,
            git_sha=git_sha,
        )
        failed: Failed | None = None
        converter = EventsOfItems(subgraph_maps(loaded, compiled.nested))
        try:
            # aclosing: a consumer that stops early must stop the graph too, not leave it running.
            span = tracing.run_span(
                run_id=run_id, thread_id=thread_id, graph=loaded.name, version=loaded.version
            )
            items = _items(graph, payload, config, timeout, checkpointer, span)
            async with contextlib.aclosing(items) as stream:
                async for item in stream:
                    marks.observe(item)
                    for event in converter.convert(item):
                        yield event
        except RunTimedOut as exc:
            failed = Failed(
                error=str(exc),
                node=converter.last_failed,
                kind="timeout",
            )
        except GraphRecursionError:
            failed = Failed(
                error=(
                    f"the run took more than {loaded.spec.spec.max_steps} steps "
                    "(spec.max_steps); a cycle may not end: bound it with max_visits "
                    "or raise max_steps"
                ),
                node=converter.last_failed,
            )
        except Exception as exc:
            failed = Failed(error=error_text(exc), node=converter.last_failed)
        if failed is not None:
            outcome = "timed_out" if failed.kind == "timeout" else "failed"
            error = failed.error
            yield failed
            return

        snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
        final = _status(thread_id, snapshot)
        if final.state == "interrupted":
            error = None
            outcome = waiting_on([{"value": item.payload} for item in final.interrupts])
            for interrupted in final.interrupts:
                yield interrupted
        elif final.state == "finished":
            outcome, error = marks.ended(), None
            yield Completed(
                output=_output(loaded.spec, final.values),
                state=outcome,
                label=state_label(outcome, marks.losses()),
            )
        else:
            error = final.error or f"the run stopped before {', '.join(final.next)}"
            yield Failed(error=error)
    finally:
        if log is not None:
            # Shielded: a cancelled consumer must still leave the run's row accurate.
            await asyncio.shield(log.finish_run(run_id, outcome, error, marks.losses()))


async def _items(
    graph: Any,
    payload: Any,
    config: dict[str, Any],
    limit_seconds: float | None,
    checkpointer: Any,
    span: contextlib.AbstractContextManager[Any],
) -> AsyncGenerator[Item, None]:
    """The run's stream items, for a consumer that awaits between them (rendering, prompting).

    :func:`~plait.engine.run.driver.drive` hands them over through a queue, so
    its deadline never fires in the consumer's code; whatever the run raised
    is raised here after the last item.
    """
    queue: asyncio.Queue[Item | None] = asyncio.Queue()
    driving = asyncio.create_task(
        drive(
            graph,
            payload,
            config,
            # Each step is persisted before the next starts, so a killed
            # process never re-runs a node that had finished.
            options={"stream_mode": STREAM_MODES, "subgraphs": True, "durability": "sync"},
            limit_seconds=limit_seconds,
            saver=checkpointer,
            each=queue.put_nowait,
            span=span,
        )
    )
    driving.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (item := await queue.get()) is not None:
            yield item
        await driving
    finally:
        if not driving.done():  # the consumer stopped early: stop the run too
            driving.cancel()
        await asyncio.wait({driving})
        if not driving.cancelled():
            driving.exception()  # raised above, or moot once the consumer stopped


def _status(thread_id: str, snapshot: StateSnapshot) -> ThreadPosition:
    values = dict(snapshot.values or {})
    if snapshot.created_at is None:
        return ThreadPosition(thread_id, "new")
    interrupts = [
        Interrupted(node=task.name, interrupt_id=item.id, payload=to_plain(item.value))
        for task in snapshot.tasks
        for item in task.interrupts
    ]
    if interrupts:
        return ThreadPosition(
            thread_id, "interrupted", list(snapshot.next), interrupts, values=values
        )
    if snapshot.next:
        errors = [f"{task.name}: {task.error}" for task in snapshot.tasks if task.error]
        return ThreadPosition(
            thread_id,
            "pending",
            list(snapshot.next),
            error="; ".join(errors) or None,
            values=values,
        )
    return ThreadPosition(thread_id, "finished", values=values)


def _output(spec: GraphSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    return {name: to_plain(values.get(name)) for name in spec.spec.output_fields}


def _check_decisions(status: ThreadPosition, decisions: Mapping[str, Any]) -> None:
    if status.state != "interrupted":
        raise RunRejected(
            f"thread {status.thread_id} is not waiting for a decision ({status.state})"
        )
    pending = {item.interrupt_id for item in status.interrupts}
    unknown = sorted(set(decisions) - pending)
    if unknown:
        raise RunRejected(
            f"no pending approval with id {', '.join(unknown)}; "
            f"pending: {', '.join(sorted(pending))}"
        )


def _nothing_to_continue(status: ThreadPosition) -> str:
    if status.state == "new":
        return f"thread {status.thread_id} has no runs yet; start it with an input"
    if status.state == "interrupted":
        return f"thread {status.thread_id} is waiting for a decision on an approval"
    return f"thread {status.thread_id} has finished; there is nothing to continue"


def _mismatch_message(existing: ThreadRecord, loaded: LoadedSpec) -> str:
    return (
        f"thread {existing.thread_id} was started on {existing.graph}@{existing.version} "
        f"(digest {existing.digest}), "
        f"but this spec is {loaded.name}@{loaded.version} (digest {loaded.digest}). "
        "A thread only continues on the exact spec it started with: restore that spec, "
        f"or start a new thread.{_upgrade_advice(existing, loaded)}"
    )


def _upgrade_advice(existing: ThreadRecord, loaded: LoadedSpec) -> str:
    """How the thread could move to ``loaded``'s version, when it is another version."""
    if existing.graph != loaded.name or existing.version == loaded.version:
        return ""
    if find_migration(loaded.spec, existing.version) is None:
        return f" Or, to move it, {migration_hint(loaded.name, existing.version, loaded.version)}."
    return (
        f" Or move it: {loaded.ref} declares a migration from {existing.version}; with both "
        f"versions published (`POST /graphs`), run `plait upgrade {existing.thread_id} "
        f"--to {loaded.version}`."
    )
