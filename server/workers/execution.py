"""Execute one claimed run: compile its graph version, stream it, journal its events.

``execute_run`` takes a run the worker holds a lease on and carries it to a
terminal state (``success``, ``error``, ``timeout``, ``interrupted``), or hands
it back (``released``) when the worker shuts down, or deletes it (``rollback``).
A run whose attempts kept losing their worker ends dead-lettered (``error``
with a ``dead_letter`` record) without running again. Every write of the
attempt is fenced by its lease (:mod:`plait.server.queue.leases`).
Every LangGraph stream chunk of a requested mode becomes one journal event in
the Agent Server format (:mod:`plait.server.queue.stream_events`); ``end`` is journaled last,
only when the run reached a terminal state.

Durability: each run's steps are checkpointed with LangGraph's ``sync``
durability unless the request asks otherwise, so a run continued by another
worker after a crash never repeats a node that had finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langgraph.errors import GraphRecursionError
from langgraph.store.postgres.aio import AsyncPostgresStore
from langgraph.types import Command, Send

from plait.engine.compiler import CompiledSpec, compile_spec
from plait.engine.governance import ToolLimiter, read_usage
from plait.engine.lru import LruCache
from plait.engine.run import (
    Item,
    RunContext,
    RunMarks,
    RunState,
    RunTimedOut,
    drive,
    graders_owed,
    losses_only,
    parked_tool,
    waiting_on,
    waits_until,
)
from plait.engine.spec import duration_seconds
from plait.engine.store import (
    Pool,
    PostgresAuditStore,
    ReadAhead,
    StepSaver,
    TenantStore,
)
from plait.engine.tools import ToolResultStore
from plait.server.approvals import records
from plait.server.auth.mcp_trust import TenantTrust
from plait.server.auth.quota import attach_quota
from plait.server.auth.store import DEFAULT_TENANT
from plait.server.auth.tenant_secrets import SecretSources
from plait.server.graphs import versions
from plait.server.operations import metrics
from plait.server.queue import runs, timers
from plait.server.queue.defaults import DEFAULT_MAX_ATTEMPTS, TOOL_LEASE_SECONDS_ENV
from plait.server.queue.fenced import FencedCheckpointer
from plait.server.queue.journal import JournalListener, RunGone, append_runs
from plait.server.queue.journal_writer import JournalCommitter, JournalWriter
from plait.server.queue.leases import Lease, LeaseLost, fenced_transaction, refused_as
from plait.server.queue.runs import Run
from plait.server.queue.stream_events import StreamPlan, interrupts_of, plan_stream
from plait.server.queue.threads import client_thread_id
from plait.server.workers import run_tracing
from plait.server.workers.mcp_task_poller import record_parked
from plait.server.workers.run_state import LiveState
from plait.server.workers.run_tracing import RunTrace

#: Why a worker stops a run: a cancel request (``interrupt``, ``rollback``), its
#: shutdown (``release``), or the run's lease went to another worker (``lost``).
StopReason = Literal["interrupt", "rollback", "release", "lost"]
Outcome = Literal[
    "success",
    "error",
    "timeout",
    "interrupted",
    "released",
    "rolled_back",
    "lost",
    "dead_lettered",
]


class RunStopped(Exception):
    """The worker stopped the run's graph (see :class:`RunStopper`)."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason = reason


class RunStopper:
    """How a worker stops a run it executes: cancel its graph, and say why.

    Only the task that drives LangGraph is cancelled, never the run's own
    task, so the run always gets to record how it ended.
    """

    def __init__(self) -> None:
        self.reason: StopReason | None = None
        self._graph_task: asyncio.Task[Any] | None = None

    def stop(self, reason: StopReason) -> None:
        """Stop the run for ``reason`` (the first reason given wins)."""
        if self.reason is None:
            self.reason = reason
        if self._graph_task is not None:
            self._graph_task.cancel()

    def check(self) -> None:
        """Raise :class:`RunStopped` when a stop was asked for."""
        if self.reason is not None:
            raise RunStopped(self.reason)

    def attach(self, task: asyncio.Task[Any]) -> None:
        """The task that drives the graph; cancelled at once when a stop was already asked."""
        self._graph_task = task
        if self.reason is not None:
            task.cancel()


@dataclass
class GraphCache:
    """Compiled graph versions by ``(tenant, name, version)``: a stored version never changes.

    The ``size`` most recently used are kept: tenants may upload versions without end.
    """

    pool: Pool
    specs_dir: Path | None = None
    size: int = 256
    _compiled: LruCache[tuple[str, str, str], CompiledSpec] = field(init=False)

    def __post_init__(self) -> None:
        self._compiled = LruCache(self.size)

    def __len__(self) -> int:
        """How many compiled versions are kept."""
        return len(self._compiled)

    async def get(self, name: str, version: str, tenant: str = DEFAULT_TENANT) -> CompiledSpec:
        """The compiled ``name@version`` as ``tenant`` sees it; subgraph refs resolve
        through the versions the tenant sees."""
        key = (tenant, name, version)
        cached = self._compiled.get(key)
        if cached is not None:
            return cached
        stored = await versions.get_version(
            self.pool, name, version, specs_dir=self.specs_dir, tenant=tenant
        )
        if stored is None:
            raise LookupError(f"graph {name}@{version} is not registered")
        published = await versions.list_graphs(self.pool, specs_dir=self.specs_dir, tenant=tenant)
        compiled = compile_spec(stored.loaded, versions.registry_from(published))
        self._compiled.put(key, compiled)
        return compiled


async def execute_run(
    run: Run,
    pool: Pool,
    *,
    worker_id: str,
    graphs: GraphCache,
    stopper: RunStopper,
    journal: JournalCommitter,
    tool_results: ToolResultStore | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    items: AsyncPostgresStore | None = None,
    read_ahead: ReadAhead | None = None,
    listener: JournalListener | None = None,
) -> Outcome:
    """Run ``run`` to its end and record it; return how it ended.

    Its events go through ``journal``, the worker's shared committer.

    Errors of the graph end the run ``error`` (journaled as an ``error``
    event), never escape. A stop from ``stopper`` ends it ``interrupted``,
    deletes it (``rollback``), or releases it to the queue (``release``).
    A run with ``max_attempts`` lost attempts in a row (its spec's value wins)
    is dead-lettered instead of run. The attempt is traced, logged and counted
    (:mod:`plait.server.workers.run_tracing`). Its nodes' ``get_store()`` is ``items`` as the
    run's tenant sees it (:class:`plait.engine.store.items.TenantStore`). ``read_ahead``
    is the read of its first checkpoint the caller already sent (:func:`read_ahead`).
    ``listener``, this process's, gets the run's last events and ``end`` as they commit
    (:func:`runs.finish_run`), and its streams send them before the attempt's own end.
    """
    async with run_tracing.observed_attempt(run, pool) as traced:
        limit = runs.max_attempts_of(run, max_attempts)
        outcome: Outcome | None = None
        try:
            if run.lost_attempts >= limit:
                outcome = await _dead_letter(run, pool, worker_id, journal, limit, traced)
                return outcome
            run_tracing.log_start(run)
            outcome = await _execute(
                run,
                pool,
                worker_id=worker_id,
                graphs=graphs,
                stopper=stopper,
                journal=journal,
                tool_results=tool_results,
                traced=traced,
                items=items,
                read_ahead=read_ahead,
                listener=listener,
            )
            return outcome
        except (RunGone, LeaseLost) as refused:
            # A write was refused: another worker took the run over (our lease
            # expired) and records its end, or the run was deleted.
            traced.detail = str(refused)
            outcome = "lost"
            return outcome
        finally:
            ended = outcome or "failed"  # recording the end failed: the lease will expire
            traced.ended(ended)
            run_tracing.log_end(ended, traced.error_code, traced.detail)
            metrics.run_finished(run.graph, ended)


async def _dead_letter(
    run: Run, pool: Pool, worker_id: str, journal: JournalCommitter, limit: int, traced: RunTrace
) -> Outcome:
    """End a run whose attempts kept losing their worker: ``error`` event, ``end``, record."""
    record = runs.dead_letter_of(run, limit)
    message = (
        f"run dead-lettered: {record['reason']} (POST /threads/{run.thread_id}/runs/"
        f"{run.run_id}/requeue, or plait queue requeue {run.run_id})"
    )
    writer = JournalWriter(run.run_id, journal, run.attempt)
    _journal_error(writer, traced, "DeadLettered", message)
    if await runs.finish_run(
        pool,
        run.run_id,
        worker_id,
        "dead_lettered",
        message,
        detail=losses_only(run.state_detail) or None,
        attempt=run.attempt,
        dead_letter=record,
        # The error event is journaled with the end, as a run that ran to it does.
        events=await writer.drain(),
        webhook=_has_webhook(run),
    ):
        metrics.run_ended(run.graph, "dead_lettered")
    traced.detail = f"{run.lost_attempts} attempts in a row lost their worker, max_attempts {limit}"
    return "dead_lettered"


async def _execute(
    run: Run,
    pool: Pool,
    *,
    worker_id: str,
    graphs: GraphCache,
    stopper: RunStopper,
    journal: JournalCommitter,
    tool_results: ToolResultStore | None,
    traced: RunTrace,
    items: AsyncPostgresStore | None,
    read_ahead: ReadAhead | None,
    listener: JournalListener | None,
) -> Outcome:
    """:func:`execute_run` inside the attempt's trace and log context."""
    plan = plan_stream(run.kwargs.get("stream_mode"), bool(run.kwargs.get("stream_subgraphs")))
    lease = Lease(run.run_id, worker_id, run.attempt)
    writer = JournalWriter(run.run_id, journal, run.attempt)
    # The run's state while it runs (`running` once driven, below); it starts from the
    # items earlier attempts lost.
    live = LiveState(pool, lease, RunMarks(run.state_detail), "running")
    # Fenced: a checkpoint this attempt writes after losing the run must not fork its thread.
    saver = FencedCheckpointer(
        pool, lease, lost_attempts=run.lost_attempts > 0, read_ahead=read_ahead
    )
    found: list[dict[str, Any]] = []
    status: Literal["success", "error", "timeout"] = "success"
    error: str | None = None
    compiled: CompiledSpec | None = None
    try:
        if _needs_metadata(run):
            writer.emit("metadata", traced.metadata({"run_id": run.run_id, "attempt": run.attempt}))
            traced.emitted()
        try:
            stopper.check()
            compiled = await graphs.get(run.graph, run.version, run.tenant)
            store = TenantStore(items, run.tenant) if items is not None else None
            if run.state != "running":
                # Taken over from a lost worker (`retrying`): this attempt runs it now.
                await runs.set_state(pool, lease, "running", live.marks.losses())
            found = await _stream(
                run,
                pool,
                compiled,
                plan,
                writer,
                stopper,
                tool_results,
                traced,
                store,
                live,
                saver,
            )
        except RunTimedOut as exc:
            status, error = "timeout", str(exc)
            _journal_error(writer, traced, "TimeoutError", error)
        except GraphRecursionError as exc:
            status, error = "error", f"the run took more steps than its limit: {exc}"
            _journal_error(writer, traced, "GraphRecursionError", error)
        except (RunStopped, LeaseLost):
            raise
        except Exception as exc:
            status, error = "error", str(exc) or type(exc).__name__
            _journal_error(writer, traced, type(exc).__name__, error)
    except RunStopped as stopped:
        await live.close()
        await writer.close()
        return await _stopped(run, pool, lease, stopped.reason, live.marks.losses())
    except BaseException:
        await live.close()
        # Also on a cancellation of the whole worker: what was emitted is kept.
        await writer.close()
        raise
    await live.close()
    # The last events not written yet are written with the end (one commit).
    last_events = await writer.drain()
    try:
        return await _finish(
            run, pool, saver, status, error, found, live.marks, compiled, last_events, listener
        )
    except BaseException:
        with contextlib.suppress(Exception):
            await saver.stored()  # its last checkpoint, if the end did not take it
        if last_events:
            # Not recorded as ended: its events are kept all the same (under the lease).
            with contextlib.suppress(Exception):
                await append_runs(
                    pool,
                    {run.run_id: last_events},
                    owner=worker_id,
                    attempts={run.run_id: run.attempt},
                )
        raise


async def _finish(
    run: Run,
    pool: Pool,
    saver: FencedCheckpointer,
    status: Literal["success", "error", "timeout"],
    error: str | None,
    found: list[dict[str, Any]],
    marks: RunMarks,
    compiled: CompiledSpec | None,
    last_events: list[tuple[str, Any]],
    listener: JournalListener | None,
) -> Outcome:
    """Record the end of a run that ran to it, with its ``last_events`` and the checkpoint of
    its last step (held by ``saver``: one transaction); return ``status``."""
    lease = saver.lease
    if found and status == "success":
        # Read through the run's saver: a read stores the checkpoint it holds first.
        usage = await read_usage(saver, {"configurable": {"thread_id": run.thread_id}})
        async with fenced_transaction(pool, lease, "recording approvals and timers") as conn:
            await records.record_interrupts(conn, run, found, usage)
            # Wait nodes' times and approvals' expiries: fired by any worker (timer_firer.py).
            await timers.record_in(conn, run, found)
        # MCP task interrupts are not approvals: they are parked tool calls the poller resumes.
        await record_parked(pool, run.run_id, found)
    state, detail = _ended(status, found, marks)
    async with saver.last_step() as last_checkpoint:
        with refused_as(lease, "checkpoint"):
            ended = await runs.finish_run(
                pool,
                run.run_id,
                lease.owner,
                state,
                error,
                detail=detail,
                attempt=run.attempt,
                values=await _webhook_values(run, saver, compiled),
                # Sampled by run id: the same on every worker; graded later, off this path.
                graders=graders_owed(compiled.loaded, run.run_id, state)
                if compiled is not None
                else (),
                events=last_events,
                webhook=_has_webhook(run),
                before=last_checkpoint,
                listener=listener,
            )
    if ended:
        if listener is not None:
            # The streams the listener woke send the end before the attempt's own
            # bookkeeping (its metrics, its last log line) runs on this loop.
            await asyncio.sleep(0)
        metrics.run_ended(run.graph, state)
    return status


def _ended(
    status: Literal["success", "error", "timeout"],
    found: list[dict[str, Any]],
    marks: RunMarks,
) -> tuple[RunState, dict[str, Any] | None]:
    """Plait's state of a run that ended with ``status`` on interrupts ``found``, and its detail."""
    losses = marks.losses()
    if status == "timeout":
        return "timed_out", losses
    if status == "error":
        return "failed", losses
    if not found:
        return marks.ended(), losses
    state = waiting_on(found)
    tools = sorted({tool for item in found if (tool := parked_tool(item.get("value")))})
    waiting: dict[str, Any] = {"interrupts": len(found)}
    if tools:
        waiting["tools"] = tools
    times = sorted(
        (until, item["value"].get("node"))
        for item in found
        if (until := waits_until(item.get("value"))) is not None
    )  # one ISO format (UTC) throughout: text order is time order
    if times:
        # What a run parked on wait nodes waits for, and until when (the earliest first).
        waiting["until"] = times[0][0]
        waiting["nodes"] = [node for _, node in times]
    return state, {**(losses or {}), "waiting": waiting}


def _has_webhook(run: Run) -> bool:
    """Whether the run's end owes a webhook a call (its ``kwargs``, fixed at creation)."""
    return bool(run.kwargs.get("webhook"))


async def _webhook_values(run: Run, saver: StepSaver, compiled: CompiledSpec | None) -> Any:
    """The thread's values at the run's end, for its ``webhook`` (``None`` without one), read
    through the run's ``saver`` (which stores the checkpoint it holds first)."""
    if not _has_webhook(run) or compiled is None:
        return None
    graph: Any = compiled.bind(saver)
    snapshot = await graph.aget_state({"configurable": {"thread_id": run.thread_id}})
    return snapshot.values


def _journal_error(writer: JournalWriter, traced: RunTrace, code: str, message: str) -> None:
    """Journal the run's ``error`` event (``code`` is the error's type name)."""
    writer.emit("error", {"error": code, "message": message})
    traced.emitted()
    traced.error_code = code


def _needs_metadata(run: Run) -> bool:
    """Whether this attempt's ``metadata`` event is still to be journaled.

    ``create_run`` journals attempt 1's with the run; a reclaimed run gets one
    per attempt, so a client sees where the takeover happened.
    """
    return run.attempt > 1


async def _stream(
    run: Run,
    pool: Pool,
    compiled: CompiledSpec,
    plan: StreamPlan,
    writer: JournalWriter,
    stopper: RunStopper,
    tool_results: ToolResultStore | None,
    traced: RunTrace,
    store: TenantStore | None,
    live: LiveState,
    saver: FencedCheckpointer,
) -> list[dict[str, Any]]:
    """Drive the graph, journaling its chunks; return the interrupts it stopped on.

    ``saver`` keeps the checkpoint of a run's last step for :func:`_finish` (``hold_last``).
    """
    kwargs = run.kwargs
    # Any: LangGraph's astream overloads cannot be matched with options built at run time.
    graph: Any = compiled.bind(saver, store)
    config = run_context(run, compiled, tool_results, pool).config()
    # The tenant's daily budget, if metered (its limits came with the claim).
    await attach_quota(config, pool, run.tenant, run.tenant_limits)
    payload = await _payload(run, graph, config)
    spec = compiled.loaded.spec.spec
    limit = duration_seconds(spec.timeout) if spec.timeout else None
    found: list[dict[str, Any]] = []
    options: dict[str, Any] = {
        "stream_mode": list(plan.langgraph_modes),
        "subgraphs": plan.subgraphs,
        "durability": kwargs.get("durability") or "sync",
    }
    for name in ("interrupt_before", "interrupt_after", "context"):
        if kwargs.get(name) is not None:
            options[name] = kwargs[name]

    def journal(item: Item) -> None:
        live.observe(item)
        namespace, mode, chunk = item
        if mode == "updates" and not namespace:
            found.extend(interrupts_of(chunk))
        events = plan.events(namespace, mode, chunk)
        for event, data in events:
            writer.emit(event, data)
        traced.journaled(mode, namespace, chunk, len(events))

    try:
        await drive(
            graph,
            payload,
            config,
            options=options,
            limit_seconds=limit,
            saver=saver,
            each=journal,
            started=stopper.attach,
            hold_last=True,
        )
    except asyncio.CancelledError:
        current = asyncio.current_task()
        # Our own task cancelled (not just the graph's): let the cancellation through.
        if stopper.reason is None or (current is not None and current.cancelling()):
            raise
        raise RunStopped(stopper.reason) from None
    return found


def run_context(
    run: Run, compiled: CompiledSpec, tool_results: ToolResultStore | None, pool: Pool
) -> RunContext:
    """The context of ``run``: the request's config under the thread, provenance and limits.

    Its spec reads only its tenant's secrets (``server/auth/tenant_secrets.py``); its models
    read tool descriptions only from MCP servers its tenant trusts (``server/auth/mcp_trust.py``).
    """
    requested: dict[str, Any] = dict(run.kwargs.get("config") or {})
    return RunContext(
        compiled.loaded,
        run.thread_id,
        run.run_id,
        checkpoint_id=_start_checkpoint(run),
        tool_results=tool_results,
        audit=PostgresAuditStore(pool),
        secrets=SecretSources.from_env(pool).of(run.tenant),
        # Tools' `limits` are the tenant's: its own credentials, its own share.
        tool_limiter=tool_limiter(pool, run.tenant),
        # A worker's loop serves many runs and must keep heartbeating: sync node code in threads.
        offload_sync=True,
        # Workers run the MCP task poller (server/workers/mcp_task_poller.py).
        park_mcp_tasks=True,
        # The servers whose tool descriptions the tenant's models may read (read on first use).
        mcp_trust=TenantTrust(pool, run.tenant),
        requested=requested,
        metadata={
            **run.metadata,
            # Checkpoints' metadata is what the API shows: the client's id of the thread.
            "thread_id": client_thread_id(run.tenant, run.thread_id),
            "graph_id": compiled.loaded.name,
            "assistant_id": run.assistant_id,
            "plait_tenant": run.tenant,  # audit records name it
        },
    )


def read_ahead(run: Run, pool: Pool) -> ReadAhead:
    """The read of the checkpoint ``run`` starts from, sent now: give it to :func:`execute_run`
    and :meth:`~plait.engine.store.ReadAhead.discard` it once the run is over."""
    return ReadAhead.start(pool, run.thread_id, _start_checkpoint(run))


def _start_checkpoint(run: Run) -> str | None:
    """The checkpoint the client asked ``run`` to start from (None: the thread's latest)."""
    if run.attempt > 1:
        return None  # a reclaimed attempt continues from its own checkpoints, not the fork
    kwargs = run.kwargs
    checkpoint_id = kwargs.get("checkpoint_id") or (kwargs.get("checkpoint") or {}).get(
        "checkpoint_id"
    )
    return str(checkpoint_id) if checkpoint_id else None


def tool_limiter(pool: Pool, tenant: str) -> ToolLimiter:
    """The turns of a tenant's limited tools, with the lease ``PLAIT_TOOL_LEASE_SECONDS`` sets."""
    seconds = os.environ.get(TOOL_LEASE_SECONDS_ENV)
    if seconds:
        return ToolLimiter(pool, tenant, lease_seconds=float(seconds))
    return ToolLimiter(pool, tenant)


async def _payload(run: Run, graph: Any, config: dict[str, Any]) -> Any:
    """What to invoke the graph with: the input, a ``Command``, or ``None`` to continue.

    A reclaimed run (attempt > 1) whose own checkpoint has tasks left continues
    from it; one that crashed before its first checkpoint starts over.
    """
    if run.attempt > 1 and await _made_progress(run, graph):
        return None
    command = run.kwargs.get("command")
    if command:
        return Command(
            resume=command.get("resume"),
            update=command.get("update"),
            goto=_goto(command.get("goto")),
        )
    return run.kwargs.get("input")


async def _made_progress(run: Run, graph: Any) -> bool:
    """Whether the thread's last checkpoint was written by this run and has work left."""
    snapshot = await graph.aget_state({"configurable": {"thread_id": run.thread_id}})
    metadata = snapshot.metadata or {}
    return bool(snapshot.next) and metadata.get("run_id") == run.run_id


def _goto(goto: Any) -> Any:
    """A command's ``goto``: node names, or ``{node, input}`` objects as ``Send``."""
    if goto is None or isinstance(goto, str):
        return goto if goto is not None else ()
    if isinstance(goto, dict):
        return Send(goto["node"], goto.get("input"))
    return [_goto(item) for item in goto]


async def _stopped(
    run: Run, pool: Pool, lease: Lease, reason: StopReason, losses: dict[str, Any] | None
) -> Outcome:
    """Record a run the worker stopped."""
    if reason == "lost":
        # Another worker holds the run now (our lease expired): it records the end.
        return "lost"
    if reason == "release":
        await runs.release_run(pool, run.run_id, lease.owner, lease.attempt)
        return "released"
    if reason == "rollback":
        await delete_checkpoints(pool, run, lease)
    if await runs.finish_run(
        pool,
        run.run_id,
        lease.owner,
        "cancelled",
        None,
        detail=losses,
        attempt=lease.attempt,
        webhook=_has_webhook(run),
    ):
        metrics.run_ended(run.graph, "cancelled")
    if reason == "rollback":
        await runs.delete_run(pool, run.thread_id, run.run_id)
        return "rolled_back"
    return "interrupted"


async def delete_checkpoints(pool: Pool, run: Run, lease: Lease) -> None:
    """Delete the checkpoints ``run`` wrote, so its thread is as it was before the run.

    LangGraph Platform's ``rollback`` deletes the run and its checkpoints; the
    thread continues from the checkpoint the run started from. The checkpoints
    a run wrote carry its ``run_id`` in their metadata (LangGraph copies every
    config metadata key with a plain value there), in every namespace.
    Channel blobs are shared between checkpoints by version and stay. Only
    while ``lease`` is held (:class:`LeaseLost` otherwise): the run may be
    another worker's by now.
    """
    async with fenced_transaction(pool, lease, "deleting checkpoints") as conn:
        cursor = await conn.execute(
            """
            DELETE FROM checkpoints
            WHERE thread_id = %s AND metadata->>'run_id' = %s
            RETURNING checkpoint_ns, checkpoint_id
            """,
            (run.thread_id, run.run_id),
        )
        deleted = await cursor.fetchall()
        if deleted:
            await conn.execute(
                """
                DELETE FROM checkpoint_writes
                WHERE thread_id = %s AND (checkpoint_ns, checkpoint_id) IN (
                    SELECT * FROM unnest(%s::text[], %s::text[]))
                """,
                (
                    run.thread_id,
                    [row["checkpoint_ns"] for row in deleted],
                    [row["checkpoint_id"] for row in deleted],
                ),
            )
