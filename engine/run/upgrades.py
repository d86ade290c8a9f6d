"""Move a thread's latest checkpoint to another version of its graph (docs/decisions.md 95).

The new checkpoint is written beside the old one, its child: state fields as the
migration says (:func:`plait.engine.spec.migrations.migrated_values`), LangGraph's
channels and seen versions under the new node ids, so the tasks that were next
(a parked approval's node among them) are next again on the new graph. A pending
interrupt is written again for the renamed task under the id LangGraph will give
it when the node runs (the hash of the task's namespace, as ``langgraph.types``'s
``_interrupt_id`` computes it for a task's first interrupt), so a resume by id
answers it. No node runs, no edge condition is evaluated again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint, copy_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.types import Interrupt
from xxhash import xxh3_128_hexdigest

from plait.engine.compiler.state import RESULT_PREFIX, VISITS
from plait.engine.spec.expressions import ExpressionError
from plait.engine.spec.migrations import migrated_values
from plait.engine.spec.models import GraphSpec, Migration

#: LangGraph 1.2's channel names a node id is part of, and its writes' channels.
_BRANCH = "branch:to:"
_INTERRUPT = "__interrupt__"
_RESUME = "__resume__"


class UpgradeRefused(Exception):
    """The thread cannot move as declared; the message says what to declare or do."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class UpgradedCheckpoint:
    """What the upgrade wrote: the new checkpoint's id (``None``: the thread had none yet),
    the fields it computed, and each moved interrupt's new id and node."""

    checkpoint_id: str | None
    written: tuple[str, ...] = ()
    interrupts: dict[str, tuple[str, str]] = field(default_factory=dict)


def interrupt_id(node: str, task_id: str) -> str:
    """The id LangGraph gives the first interrupt of top-level task ``task_id`` of ``node``."""
    return xxh3_128_hexdigest(f"{node}:{task_id}".encode())


def _renamed_channel(channel: str, nodes: Mapping[str, str]) -> str:
    for prefix in (_BRANCH, RESULT_PREFIX):
        if channel.startswith(prefix):
            node = channel[len(prefix) :]
            return prefix + nodes.get(node, node)
    return channel


async def upgrade_checkpoint(
    saver: BaseCheckpointSaver[Any],
    old_graph: Any,
    new_graph: Any,
    config: RunnableConfig,
    *,
    old_spec: GraphSpec,
    new_spec: GraphSpec,
    migration: Migration,
    metadata: Mapping[str, Any],
) -> UpgradedCheckpoint:
    """Write the thread's next checkpoint (``config`` addresses the thread) for ``new_graph``.

    ``old_graph`` and ``new_graph`` are the two versions compiled and bound to
    ``saver``. ``metadata`` goes into the new checkpoint's metadata. Raises
    :class:`UpgradeRefused` when a node that is next has no counterpart in the
    new version (``no-node``), is reached another way there (``node-moved``) or runs a
    subgraph (``in-subgraph``), a task is half-answered (``partly-resumed``) or an
    expression fails on the thread's state (``migration-failed``).
    """
    current = await saver.aget_tuple(config)
    if current is None:
        return UpgradedCheckpoint(None)
    snapshot = await old_graph.aget_state(current.config)
    nodes = dict(migration.nodes)
    for task in snapshot.tasks:
        target = nodes.get(task.name, task.name)
        if target not in new_spec.spec.nodes:
            raise UpgradeRefused(
                f"the thread waits on node `{task.name}` of {old_spec.metadata.name}@"
                f"{old_spec.metadata.version}, and {new_spec.metadata.version} has no node "
                f"`{target}`; declare the node it became in the migration from "
                f'"{old_spec.metadata.version}": `nodes: {{{task.name}: <new node id>}}`',
                "no-node",
            )
        _check_movable(task, target, old_graph, new_graph, nodes)
    writes_by_task: dict[str, list[tuple[str, Any]]] = {}
    for task_id, channel, value in current.pending_writes or ():
        if channel == _RESUME:
            raise UpgradeRefused(
                "a task of the thread is half-answered (some of its interrupts were resumed); "
                "answer the rest on the current version, then upgrade",
                "partly-resumed",
            )
        writes_by_task.setdefault(task_id, []).append((channel, value))

    # The snapshot's values: a field never written reads as its default, as nodes see it.
    old_values = {name: snapshot.values.get(name) for name in old_spec.spec.state}
    try:
        written, kept = migrated_values(migration, old_values, new_spec)
    except ExpressionError as exc:
        raise UpgradeRefused(
            f"the migration from {old_spec.metadata.version} fails on this thread's state: "
            f"{exc}; fix the expression in {new_spec.metadata.name}@"
            f"{new_spec.metadata.version}'s migrations (a new version), then upgrade",
            "migration-failed",
        ) from None
    step = int((current.metadata or {}).get("step", -1)) + 1
    checkpoint = _moved(current.checkpoint, saver, old_spec, nodes, written, kept, step)
    new_versions = {
        channel: version
        for channel, version in checkpoint["channel_versions"].items()
        if current.checkpoint["channel_versions"].get(channel) != version
    }
    new_config = await saver.aput(
        current.config,
        checkpoint,
        {"source": "update", "step": step, "parents": {}, **metadata},  # type: ignore[typeddict-item]
        new_versions,
    )
    moved = await _move_pending(saver, new_graph, new_config, snapshot.tasks, writes_by_task, nodes)
    return UpgradedCheckpoint(checkpoint["id"], tuple(sorted(written)), moved)


def _check_movable(
    task: Any, target: str, old_graph: Any, new_graph: Any, nodes: Mapping[str, str]
) -> None:
    """Refuse what the copy cannot carry over, before anything is written."""
    if task.state is not None:
        # The child graph's checkpoints live under the parent task's id, which changes.
        raise UpgradeRefused(
            f"the thread waits inside node `{task.name}`, which runs a subgraph; upgrading "
            "a thread parked in a subgraph is not supported: answer it on the current "
            "version first",
            "in-subgraph",
        )
    old_triggers = {_renamed_channel(c, nodes) for c in old_graph.nodes[task.name].triggers}
    if not old_triggers & set(new_graph.nodes[target].triggers):
        raise UpgradeRefused(
            f"node `{task.name}` is next on the thread, and `{target}` is reached another way "
            "in the new version (e.g. it became the join of a `parallel` node); upgrading a "
            "thread across that change is not supported: let the step finish first",
            "node-moved",
        )


def _moved(
    old: Checkpoint,
    saver: BaseCheckpointSaver[Any],
    old_spec: GraphSpec,
    nodes: Mapping[str, str],
    written: Mapping[str, Any],
    kept: set[str],
    step: int,
) -> Checkpoint:
    """``old`` as the new version's checkpoint (a new id; see the module docstring).

    A field of the new state that is neither written nor kept has no channel
    value, so its channel starts from its default.
    """
    checkpoint = copy_checkpoint(old)
    checkpoint["id"] = str(uuid6(clock_seq=step))
    checkpoint["ts"] = datetime.now(UTC).isoformat()
    old_fields = set(old_spec.spec.state)
    values: dict[str, Any] = {}
    versions: dict[str, Any] = {}
    for channel, version in old["channel_versions"].items():
        if channel in old_fields and channel not in kept:
            continue  # renamed, dropped or recomputed: the new state's, below
        renamed = _renamed_channel(channel, nodes)
        versions[renamed] = version
        if channel in old["channel_values"]:
            values[renamed] = old["channel_values"][channel]
    if isinstance(values.get(VISITS), Mapping):
        values[VISITS] = {nodes.get(k, k): v for k, v in values[VISITS].items()}
        versions[VISITS] = saver.get_next_version(versions.get(VISITS), None)
    newest = max(old["channel_versions"].values(), default=None)
    for name, value in written.items():
        versions[name] = saver.get_next_version(newest, None)
        values[name] = value
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = versions
    checkpoint["versions_seen"] = {
        nodes.get(node, node): {_renamed_channel(c, nodes): v for c, v in seen.items()}
        for node, seen in old["versions_seen"].items()
    }
    # LangGraph looks for next tasks among the nodes these channels trigger.
    updated = old.get("updated_channels")
    if updated is not None:
        moved = {_renamed_channel(channel, nodes) for channel in updated}
        checkpoint["updated_channels"] = sorted(moved | set(written))
    return checkpoint


async def _move_pending(
    saver: BaseCheckpointSaver[Any],
    new_graph: Any,
    config: Any,
    old_tasks: Any,
    writes_by_task: Mapping[str, list[tuple[str, Any]]],
    nodes: Mapping[str, str],
) -> dict[str, tuple[str, str]]:
    """Write the old tasks' pending writes for the new checkpoint's tasks; the moved
    interrupts, old id -> (new id, node)."""
    snapshot = await new_graph.aget_state(config)
    new_tasks = {task.name: task for task in snapshot.tasks}
    moved: dict[str, tuple[str, str]] = {}
    for task in old_tasks:
        writes = writes_by_task.get(task.id)
        if not writes:
            continue
        node = nodes.get(task.name, task.name)
        new_task = new_tasks[node]
        copied: list[tuple[str, Any]] = []
        for channel, value in writes:
            if channel == _INTERRUPT:
                items = []
                for item in value:
                    new_id = interrupt_id(node, new_task.id)
                    moved[item.id] = (new_id, node)
                    items.append(Interrupt(value=_renamed_payload(item.value, nodes), id=new_id))
                copied.append((_INTERRUPT, items))
            else:
                copied.append((_renamed_channel(channel, nodes), value))
        await saver.aput_writes(config, copied, new_task.id)
    return moved


def _renamed_payload(value: Any, nodes: Mapping[str, str]) -> Any:
    """An approval's payload names its node: the new id."""
    if isinstance(value, Mapping) and value.get("kind") == "approval" and "node" in value:
        return {**value, "node": nodes.get(value["node"], value["node"])}
    return value
