"""A run's trajectory: every step in order with its input, output, tool calls and approvals.

One JSON object per run, what graders see and what ``GET .../trajectory`` and the
JSON Lines export return. It is a projection of what the run left behind, read
when asked for:

- the steps are the run's checkpoints (each carries the run's id in its metadata):
  per superstep, each task's node, the state it started from (``input``), what it
  wrote (``output``), its error and interrupts. A run resumed after an approval
  starts with the task it resumed, whose checkpoint the run before it wrote;
- tool calls (arguments, status, reuse) and the run's other audit records
  (refusals, compensations, audited model calls) come from the audit trail,
  each under the step that made it;
- approvals the run raised, and the decision it carried back, from the approvals.

The whole object has the secrets the spec names masked as ``[redacted:NAME]``
(the values its tenant holds), as tool results and audited model calls are.
A run with ``durability: exit`` kept only its last checkpoint, and a stateless
run deleted with its thread none: their steps are what is left.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any

from plait.engine.compiler import CompiledSpec
from plait.engine.governance import mask_spec_secrets, read_usage
from plait.engine.store import Pool, new_checkpointer, read_run_audit
from plait.server.approvals.records import approvals_of_run
from plait.server.auth.tenant_secrets import SecretSources
from plait.server.queue.runs import Run
from plait.server.queue.stream_events import to_json
from plait.server.queue.threads import client_thread_id

#: Version of the trajectory's shape, in every object (``format``).
FORMAT = "plait.trajectory/v1"


async def trajectory(pool: Pool, run: Run, compiled: CompiledSpec) -> dict[str, Any]:
    """The trajectory of ``run`` (a run of ``compiled``), secrets masked (see module doc)."""
    checkpointer = new_checkpointer(pool)
    graph: Any = compiled.bind(checkpointer)
    snapshots = await _snapshots(graph, run)
    audit = await read_run_audit(pool, run.run_id, run.tenant)
    approvals = await approvals_of_run(pool, run.run_id, run.tenant)
    steps, unplaced = _steps(snapshots, audit, approvals)
    last = snapshots[-1] if snapshots else None
    output = None
    usage = None
    if last is not None and last.metadata.get("run_id") == run.run_id:
        fields = compiled.loaded.spec.spec.output_fields
        values = last.values or {}
        output = {name: to_json(values[name]) for name in fields if name in values}
        usage = await read_usage(checkpointer, last.config)
    data = {
        "format": FORMAT,
        "run_id": run.run_id,
        "thread_id": client_thread_id(run.tenant, run.thread_id),
        "graph": run.graph,
        "version": run.version,
        "digest": run.digest,
        "status": run.status,
        "state": run.state,
        "error": run.error,
        "created_at": run.created_at.isoformat(),
        "updated_at": run.updated_at.isoformat(),
        "input": to_json(run.kwargs.get("input")),
        "command": to_json(run.kwargs.get("command")),
        "output": output,
        "usage": to_json(usage),
        "steps": steps,
        **unplaced,
    }
    source = SecretSources.from_env(pool).of(run.tenant)
    masked: dict[str, Any] = await mask_spec_secrets(data, compiled.loaded.spec.spec, source)
    return masked


async def _snapshots(graph: Any, run: Run) -> list[Any]:
    """The run's checkpoints oldest first; with the one it resumed from, when another run
    wrote it (its interrupted tasks finished in this run)."""
    config = {"configurable": {"thread_id": run.thread_id}}
    mine = {"run_id": run.run_id}
    found = [snapshot async for snapshot in graph.aget_state_history(config, filter=mine)]
    found.reverse()
    if found and found[0].parent_config:
        parent = await graph.aget_state(found[0].parent_config)
        if parent.metadata and parent.metadata.get("run_id") != run.run_id:
            found.insert(0, parent)
    return found


def _steps(
    snapshots: list[Any], audit: list[dict[str, Any]], approvals: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """The steps in order, and what could not be placed under one (``audit``, ``approvals``)."""
    by_task: dict[str, dict[str, Any]] = {}
    steps: list[dict[str, Any]] = []
    for position, snapshot in enumerate(snapshots):
        resumed = position == 0 and len(snapshots) > 1 and _other_run(snapshot, snapshots[1])
        for task in snapshot.tasks:
            if task.name.startswith("__") or task.id in by_task:
                continue  # LangGraph's own input task; a task seen from an earlier checkpoint
            if resumed and not task.interrupts:
                continue  # finished in the run before: only the interrupted ones resumed here
            step = {
                "step": snapshot.metadata.get("step"),
                "node": task.name,
                "task_id": task.id,
                "input": to_json(snapshot.values),
                "output": to_json(task.result),
                "error": task.error,
                "interrupts": [to_json(item) for item in task.interrupts],
                "tool_calls": [],
                "audit": [],
                "approvals": [],
            }
            by_task[task.id] = step
            steps.append(step)
    unplaced: dict[str, list[dict[str, Any]]] = {"audit": [], "approvals": []}
    for record in audit:
        owner = by_task.get(_task_of(record.get("step")))
        entry = _audit_entry(record)
        if owner is None:
            unplaced["audit"].append(entry)
        elif record["kind"] == "tool_call":
            owner["tool_calls"].append(entry)
        else:
            owner["audit"].append(entry)
    for approval in approvals:
        owner = _approval_step(steps, approval)
        (owner["approvals"] if owner is not None else unplaced["approvals"]).append(
            _approval_entry(approval)
        )
    for index, step in enumerate(steps):
        step["index"] = index
    return steps, unplaced


def _other_run(first: Any, second: Any) -> bool:
    return bool((first.metadata or {}).get("run_id") != (second.metadata or {}).get("run_id"))


def _task_of(namespace: str | None) -> str:
    """The top-level task id in a step's namespace (``node:task`` or ``node:task|child:id``)."""
    return (namespace or "").split("|", 1)[0].rpartition(":")[2]


def _audit_entry(record: Mapping[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"kind": record["kind"], "node": record["node"]}
    if record.get("tool") is not None:
        entry["tool"] = record["tool"]
    entry["actor"] = record["actor"]
    entry.update(record.get("detail") or {})
    entry["at"] = record["created_at"]
    return entry


def _approval_step(
    steps: list[dict[str, Any]], approval: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The step that raised or resumed ``approval``: its interrupt's, else its node's last."""
    interrupt = approval.get("interrupt_id")
    for step in steps:
        if any(item.get("id") == interrupt for item in step["interrupts"]):
            return step
    matches = [step for step in steps if step["node"] == approval.get("node")]
    return matches[-1] if matches else None


def _approval_entry(approval: Mapping[str, Any]) -> dict[str, Any]:
    keys = (
        "approval_id",
        "node",
        "action",
        "arguments",
        "reason",
        "status",
        "decision",
        "decided_by",
        "created_at",
        "decided_at",
        "run_id",
        "resume_run_id",
    )
    return {key: _plain_time(approval.get(key)) for key in keys}


def _plain_time(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


async def export_lines(
    pool: Pool,
    pages: AsyncIterator[list[Run]],
    compiled_of: Callable[[Run], Awaitable[CompiledSpec]],
) -> AsyncIterator[dict[str, Any]]:
    """The trajectory of each run of ``pages`` (pages of runs read lazily), one at a time.

    ``compiled_of(run)`` gives the run's compiled version (a cache of them).
    """
    async for page in pages:
        for run in page:
            yield await trajectory(pool, run, await compiled_of(run))
