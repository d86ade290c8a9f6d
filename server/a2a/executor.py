"""The ``AgentExecutor`` of a served graph: an A2A task is a Plait thread, run by the queue.

- A new message starts a run on a new thread whose id is the task id, through
  the durable queue (:func:`plait.server.queue.runs.create_run`): any worker runs it,
  and it survives a worker's crash like every run.
- The executor follows the run's journal (:mod:`plait.server.queue.journal`): node updates
  and custom events become ``TASK_STATE_WORKING`` status updates.
- A run that stops on approvals makes the task ``TASK_STATE_INPUT_REQUIRED``
  (the approvals are listed in the status message, and in ``GET /approvals``).
  A follow-up message on the task is the decision: it is recorded through the
  approvals inbox (:func:`server.decisions.decide`), which resumes the thread
  with ``command.resume``; the executor follows that run the same way. When
  nothing is pending any more (answered in the inbox), a follow-up follows the
  thread's newest run instead.
- A finished run completes the task with one artifact, ``output``: the graph's
  output fields as a data part. An error or timeout fails it.
- Cancelling the task cancels the thread's active runs (:func:`cancel_run`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Message, Part, Task, TaskState, TaskStatus
from google.protobuf.json_format import ParseDict
from google.protobuf.struct_pb2 import Value

from plait.engine.run import RunRejected, a2a_state_of, check_input, state_label
from plait.server.a2a.messages import NotADecision, decision_of, run_input
from plait.server.a2a.task_store import tenant_of
from plait.server.approvals import records
from plait.server.graphs import rollouts, versions
from plait.server.queue import decisions, threads
from plait.server.queue.runs import (
    TERMINAL,
    Run,
    RunNotFound,
    cancel_run,
    create_run,
    get_run,
    list_runs,
)
from plait.server.queue.stream_events import to_json

if TYPE_CHECKING:
    from plait.server.api.deps import Services

log = logging.getLogger(__name__)

#: The modes an A2A run journals: progress (updates, custom) and the final values.
STREAM_MODES = ["updates", "custom", "values"]
#: Who decided an approval answered over A2A (``decided_by``), before the caller's name.
ACTOR_PREFIX = "a2a"


def data_part(value: Any) -> Part:
    """A data part holding the JSON ``value``."""
    return Part(data=ParseDict(to_json(value), Value()))


def approvals_message(pending: Sequence[Mapping[str, Any]]) -> list[Part]:
    """The parts of an input-required status: what each approval asks, and how to answer."""
    lines = []
    for approval in pending:
        reason = approval.get("reason") or "needs a decision"
        lines.append(f"Approval needed for {approval.get('action')}: {reason}")
    lines.append("Reply `approve` or `reject`, or send {decision: approve|reject|edit, ...}.")
    listed = [
        {
            "approval_id": approval["approval_id"],
            "node": approval.get("node"),
            "action": approval.get("action"),
            "arguments": approval.get("arguments"),
            "reason": approval.get("reason"),
            "expires_at": approval.get("expires_at"),
        }
        for approval in pending
    ]
    return [Part(text="\n".join(lines)), data_part({"approvals": listed})]


class PlaitAgentExecutor(AgentExecutor):
    """Runs the graph ``graph`` for A2A tasks (one executor per served graph)."""

    def __init__(self, services: Services, graph: str) -> None:
        self.services = services
        self.graph = graph

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Start a run for a new task, or resume the task's thread with a decision."""
        task_id, context_id = str(context.task_id), str(context.context_id)
        call = context.call_context
        tenant = tenant_of(call)
        updater = TaskUpdater(event_queue, task_id, context_id)
        message = context.message or Message()
        if context.current_task is None:
            # The SDK needs the task before any status update of it.
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[message],
                )
            )
        pool = self.services.pool
        # The task's thread is the tenant's, like any thread it makes (server/queue/threads.py).
        thread_id = threads.stored_thread_id(tenant, task_id)
        thread = await threads.get_thread(pool, thread_id, tenant)
        if thread is None and context.current_task is None:
            run = await self._start(task_id, context_id, message, tenant, updater)
            if run is None:
                return
        elif thread is None:
            # A follow-up must never start a new run: its text is an answer, not an input.
            text = (
                f"task {task_id} has no thread (deleted, or never started); "
                "send a new message to start again"
            )
            await updater.failed(updater.new_agent_message([Part(text=text)]))
            return
        else:
            pending = await records.list_approvals(
                pool, "pending", thread_id=thread_id, tenant=tenant
            )
            if not pending:
                # Nothing waits for an answer (it may have been given in the inbox):
                # keep following what the thread runs.
                found = await self._newest_run(task_id, tenant, updater)
                if found is None:
                    return
                run = found
            else:
                try:
                    decision = decision_of(message)
                except NotADecision as exc:
                    parts = [Part(text=str(exc)), *approvals_message(pending)[1:]]
                    await updater.requires_input(updater.new_agent_message(parts))
                    return
                user = call.user.user_name or "anonymous"
                try:
                    _, run = await decisions.decide(
                        pool,
                        pending[0]["approval_id"],
                        decision.model_dump(exclude_none=True),
                        f"{ACTOR_PREFIX}:{user}",
                        tenant=tenant,
                    )
                except (records.ApprovalClosed, records.ApprovalNotFound):
                    # Decided meanwhile in the inbox (first decision wins): follow its run.
                    found = await self._newest_run(task_id, tenant, updater)
                    if found is None:
                        return
                    run = found
        await updater.start_work(
            updater.new_agent_message([data_part({"run_id": run.run_id, "thread_id": task_id})])
        )
        await self._follow(run, updater, tenant)

    async def _newest_run(self, task_id: str, tenant: str, updater: TaskUpdater) -> Run | None:
        """The newest run of the task's thread; ``None`` (the task failed) when it has none."""
        newest = await list_runs(
            self.services.pool, threads.stored_thread_id(tenant, task_id), limit=1, tenant=tenant
        )
        if not newest:
            text = f"task {task_id} has no run on its thread to follow"
            await updater.failed(updater.new_agent_message([Part(text=text)]))
            return None
        return newest[0]

    async def _start(
        self,
        task_id: str,
        context_id: str,
        message: Message,
        tenant: str,
        updater: TaskUpdater,
    ) -> Run | None:
        """Queue the first run of a task on a new thread; ``None`` when the input is refused."""
        pool = self.services.pool
        graph = await versions.latest(
            pool, self.graph, specs_dir=self.services.settings.specs_dir, tenant=tenant
        )
        if graph is None:
            await updater.failed(
                updater.new_agent_message([Part(text=f"graph {self.graph} is not registered")])
            )
            return None
        thread_id = threads.stored_thread_id(tenant, task_id)
        # A task is a new thread: the tenant's rollout of the graph picks its version.
        chosen = await rollouts.version_for_new_thread(
            pool, graph, thread_id, tenant, specs_dir=self.services.settings.specs_dir
        )
        if chosen is not None:
            graph = chosen[0]
        values = run_input(graph.loaded.spec, message)
        try:
            check_input(graph.loaded.spec, values)
        except RunRejected as exc:
            await updater.reject(updater.new_agent_message([Part(text=str(exc))]))
            return None
        marker = {"task_id": task_id, "context_id": context_id, "graph": self.graph}
        await threads.create_thread(
            pool,
            thread_id=thread_id,
            metadata={"plait_a2a": marker},
            if_exists="do_nothing",
            tenant=tenant,
        )
        run, _ = await create_run(
            pool,
            thread_id=thread_id,
            graph=graph,
            kwargs={
                "input": values,
                "command": None,
                "config": {},
                "context": {},
                "stream_mode": STREAM_MODES,
                "stream_subgraphs": False,
                "stream_resumable": False,
                "durability": None,
            },
            metadata={"plait_a2a": marker},
            multitask_strategy="enqueue",
            tenant=tenant,
        )
        return run

    async def _follow(self, run: Run, updater: TaskUpdater, tenant: str) -> None:
        """Relay the run's journal as status updates, then set the task's state from its end."""
        services = self.services
        values: Any = None
        error: Any = None
        events = services.listener.subscribe(run.run_id, 0)
        try:
            async for event in events:
                if event.event == "updates" and isinstance(event.data, Mapping):
                    for node, update in event.data.items():
                        if node == "__interrupt__":
                            continue
                        await updater.update_status(
                            TaskState.TASK_STATE_WORKING,
                            updater.new_agent_message(
                                [data_part({"node": node, "update": update})]
                            ),
                        )
                elif event.event == "custom":
                    await updater.update_status(
                        TaskState.TASK_STATE_WORKING,
                        updater.new_agent_message([data_part({"custom": event.data})]),
                    )
                elif event.event == "values":
                    values = event.data
                elif event.event == "error":
                    error = event.data
        finally:
            # A cancelled task (CancelTask) must not leave its journal subscription behind.
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        await self._finish(run, updater, tenant, values, error)

    async def _finish(
        self, run: Run, updater: TaskUpdater, tenant: str, values: Any, error: Any
    ) -> None:
        pool = self.services.pool
        final = await get_run(pool, run.run_id, tenant=tenant)
        # Rolled back (deleted): the task ends as the run did, cancelled.
        state, detail = final.shown_state() if final is not None else ("cancelled", None)
        task_state = a2a_state_of(state)  # the one mapping: engine/run/states.py
        if task_state == "TASK_STATE_CANCELED" or final is None or final.status not in TERMINAL:
            await updater.cancel()
            return
        if task_state == "TASK_STATE_FAILED":
            text = (
                error.get("message") if isinstance(error, Mapping) else None
            ) or f"the run ended {state_label(state, detail)}"
            await updater.failed(updater.new_agent_message([Part(text=str(text))]))
            return
        if task_state == "TASK_STATE_INPUT_REQUIRED":
            pending = await records.list_approvals(
                pool, "pending", thread_id=run.thread_id, tenant=tenant
            )
            await updater.requires_input(updater.new_agent_message(approvals_message(pending)))
            return
        if state in ("waiting_for_tool", "waiting_for_timer"):
            # Still working: the MCP task poller (or the timer) resumes the thread when
            # the tool is done (the time comes); a follow-up message on the task follows that run.
            await updater.update_status(
                TaskState.TASK_STATE_WORKING,
                updater.new_agent_message([Part(text=state_label(state, detail))]),
            )
            return
        output = await self._output(run, values, tenant)
        await updater.add_artifact([data_part(output)], name="output")
        await updater.complete()

    async def _output(self, run: Run, values: Any, tenant: str) -> dict[str, Any]:
        """The graph's output fields from the run's last ``values`` event."""
        if not isinstance(values, Mapping):
            return {}
        compiled = await self.services.graphs.get(run.graph, run.version, tenant)
        return {name: values[name] for name in compiled.output_fields if name in values}

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Cancel the thread's active runs, and the task."""
        task_id = str(context.task_id)
        tenant = tenant_of(context.call_context)
        pool = self.services.pool
        thread_id = threads.stored_thread_id(tenant, task_id)
        for run in await list_runs(pool, thread_id, limit=100, tenant=tenant):
            if run.status in ("pending", "running"):
                with contextlib.suppress(RunNotFound):  # deleted meanwhile: nothing to stop
                    await cancel_run(pool, thread_id, run.run_id, "interrupt", tenant=tenant)
        updater = TaskUpdater(event_queue, task_id, str(context.context_id))
        await updater.cancel()
