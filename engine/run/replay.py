"""Recordings of real runs, and replays of them with nothing called.

:func:`record_thread` turns a thread into a :class:`Recording`: its input, the
decisions given to its approvals and the path it took (from its checkpoints),
the model replies (the audit trail: ``spec.audit.model_calls``), the tool
results and what each ``a2a`` node's remote agent answered (the idempotency
records) its runs got, and how it ended. :func:`replay_recording` runs a spec on
a new thread with those replies, results and answers in play
(:mod:`plait.engine.tools.cassette`), giving the same decisions, and
:func:`compare` says where outcome, path, cost or state changed. Replaying on the
version recorded proves the recording; on another version it shows what a change
to a prompt, an edge or a router does to real traffic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from itertools import count
from typing import Any

from langchain_core.runnables import RunnableConfig

from plait.engine.compiler import CompiledSpec
from plait.engine.run.records import RunLog
from plait.engine.run.runner import CompiledGraph, new_thread_id
from plait.engine.run.spec_tests import Outcome, Usage, drive_case, measuring_usage
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.expressions import to_plain
from plait.engine.spec.models import MapNode
from plait.engine.spec.nesting import Place, places
from plait.engine.store import new_checkpointer
from plait.engine.store.audit import read_thread_model_calls
from plait.engine.store.pool import Pool
from plait.engine.store.tool_results import read_thread_results
from plait.engine.tools.cassette import (
    Cassette,
    RecordedA2aCall,
    RecordedA2aTurn,
    RecordedModelCall,
    RecordedToolCall,
    playing,
)

#: The ``format`` of a recording file; another value is refused. Fields added since
#: (``a2a_calls``, ``node_keys``) are optional when read: a file without ``a2a_calls``
#: holds none; one without ``node_keys`` keeps its model replies and tool results by node id.
FORMAT = "plait-recording/v1"
#: ``node_keys`` of a recording whose model replies and tool results are kept by the path of
#: the node that asked (``office/desk/classify``; ``each[1]`` for what item 1 of a map of
#: ``llm``, ``agent`` or ``tool`` items asked, ``each`` in files recorded before, which the
#: cassette serves to all items); files recorded before paths lack the field, and hold the
#: node's id (:data:`BY_ID`), whatever subgraph it ran in.
BY_PATH = "path"
BY_ID = "id"
_RESUME = "__resume__"
#: The task id LangGraph writes a ``Command``'s resume value under (its private constant).
_NO_TASK = "00000000-0000-0000-0000-000000000000"
_START = "__start__"


class RecordingError(Exception):
    """A thread that cannot be recorded, or a file that is not a recording."""


@dataclass
class Ending:
    """How a thread ended and what it cost: what a replay is compared with."""

    outcome: Outcome
    steps: list[str]
    error: str = ""
    state: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class Recording:
    """A thread's runs, enough to run them again with no model, tool or agent called."""

    graph: str
    version: str
    digest: str
    thread_id: str
    input: dict[str, Any]
    decisions: list[Any]
    model_calls: list[RecordedModelCall]
    tool_calls: list[RecordedToolCall]
    a2a_calls: list[RecordedA2aCall]
    expected: Ending
    recorded_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    #: What ``model_calls[].node`` and ``tool_calls[].node`` hold: the node's path
    #: (:data:`BY_PATH`), or its bare id in files recorded before (:data:`BY_ID`), which
    #: :func:`with_paths` places before they are replayed.
    node_keys: str = BY_PATH

    def to_json(self) -> dict[str, Any]:
        """The recording as the JSON of a recording file."""
        return {"format": FORMAT, **to_plain(asdict(self))}

    @classmethod
    def from_json(cls, data: Any) -> Recording:
        """A recording from a file's JSON; :class:`RecordingError` says what is wrong."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RecordingError(f"not a Plait recording: its `format` must be {FORMAT!r}")
        try:
            recording = cls(
                graph=data["graph"],
                version=data["version"],
                digest=data["digest"],
                thread_id=data["thread_id"],
                input=dict(data["input"]),
                decisions=list(data["decisions"]),
                model_calls=[RecordedModelCall(**call) for call in data["model_calls"]],
                tool_calls=[RecordedToolCall(**call) for call in data["tool_calls"]],
                a2a_calls=[
                    RecordedA2aCall(
                        node=call["node"],
                        args=call["args"],
                        turns=[RecordedA2aTurn(**turn) for turn in call["turns"]],
                    )
                    # Absent from files recorded before a2a answers were: they hold none.
                    for call in data.get("a2a_calls", [])
                ],
                expected=Ending(**data["expected"]),
                recorded_at=data["recorded_at"],
                # Absent from files recorded before calls were kept by path: node ids.
                node_keys=data.get("node_keys", BY_ID),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordingError(f"a recording's field is missing or malformed: {exc}") from None
        if recording.node_keys not in (BY_PATH, BY_ID):
            raise RecordingError(
                f"a recording's `node_keys` is {recording.node_keys!r}: this Plait reads "
                f"{BY_PATH!r} (or no `node_keys`, in files recorded before it)"
            )
        return recording


@dataclass
class ReplayResult:
    """A replay's ending and how it differs from the recording's."""

    ending: Ending
    #: What changed, one line each: outcome, path, error, cost, tokens, state fields.
    changes: list[str]
    #: The changes that make the replay fail: outcome or path (a divergence is one).
    failed: bool
    #: Recorded model replies, tool results and remote agents' answers the replay never
    #: asked for.
    unused: tuple[int, int, int] = (0, 0, 0)


async def thread_ending(compiled: CompiledGraph, pool: Pool, thread_id: str) -> Ending:
    """How ``thread_id`` stands, from its checkpoints: outcome, path, error, state."""
    return (await _history(compiled, pool, thread_id))[2]


async def record_thread(
    compiled: CompiledSpec, pool: Pool, thread_id: str, stored_thread_id: str | None = None
) -> Recording:
    """The recording of ``thread_id`` (the spec it ran is ``compiled``).

    ``stored_thread_id`` is the id its records are kept under when it differs
    (another tenant's thread). Its usage is counted as a replay's is, from the
    recorded replies and the spec's prices. Model replies and tool results are kept
    by the path of the node that asked; records made before paths were kept are
    placed by :func:`older_paths`. Raises :class:`RecordingError` when the thread
    has no checkpoint, or made model calls whose replies were not kept, or messaged
    remote agents whose answers were not kept, or has records made before paths were
    kept that cannot be placed.
    """
    stored = stored_thread_id or thread_id
    start, decisions, ending = await _history(compiled, pool, stored)
    spec = compiled.loaded.spec
    replies = [
        (node, detail)
        for node, detail in await read_thread_model_calls(pool, stored)
        if isinstance(detail.get("reply"), dict)
    ]
    rows = await read_thread_results(pool, stored)
    older = {node for node, detail in replies if not detail.get("path")}
    older |= {row["node"] for row in rows if not row.get("path") and not _a2a_turn(row)}
    placed = _placed_or_refused(older, compiled, f"thread {thread_id!r} ran")
    models = [
        RecordedModelCall(
            node=str(detail.get("path") or placed[node]),
            model=str(detail.get("model", "")),
            reply=detail["reply"],
        )
        for node, detail in replies
    ]
    ran = [node for node in dict.fromkeys(ending.steps) if node in _model_nodes(compiled.loaded)]
    if not models and ran:
        raise RecordingError(
            f"thread {thread_id!r} ran model nodes ({', '.join(ran)}) but its runs kept no "
            "model replies: set `audit: {model_calls: true}` in the spec so that its runs "
            "keep what the model said, then record a new run"
        )
    a2a_nodes = {name for name, node in spec.spec.nodes.items() if node.kind == "a2a"}
    tools, remote = recorded_calls(rows, a2a_nodes, thread_id, placed)
    if remote and not any(call.turns for call in remote):
        names = ", ".join(dict.fromkeys(call.node for call in remote))
        raise RecordingError(
            f"thread {thread_id!r} sent messages to remote agents ({names}) but its runs kept "
            "none of their answers: it ran on a Plait that did not keep them, or stopped "
            "before an agent answered; record a new run"
        )
    usage = Usage(model_calls=len(models), tool_calls=len(tools))
    for call in models:
        tokens = call.reply.get("usage") or {}
        inputs, outputs = int(tokens.get("input_tokens", 0)), int(tokens.get("output_tokens", 0))
        usage.input_tokens += inputs
        usage.output_tokens += outputs
        definition = spec.spec.models.get(call.model)
        if definition is not None and definition.price is not None:
            usage.cost += definition.price.cost(inputs, outputs)
    ending.usage = usage.as_root()
    return Recording(
        graph=compiled.loaded.name,
        version=compiled.loaded.version,
        digest=compiled.loaded.digest,
        thread_id=thread_id,
        input=start,
        decisions=decisions,
        model_calls=models,
        tool_calls=tools,
        a2a_calls=remote,
        expected=ending,
    )


async def replay_recording(
    loaded: LoadedSpec,
    compile_spec: Callable[[LoadedSpec], CompiledGraph],
    pool: Pool,
    recording: Recording,
    log: RunLog | None = None,
) -> ReplayResult:
    """Run ``loaded`` on a new thread as ``recording``'s runs ran, with nothing called.

    The input and decisions are the recording's; every model reply, tool result and
    remote agent's answer comes from it. ``loaded`` may be another version than the one
    recorded. Usage is counted inside :func:`plait.engine.run.counting_usage` (the
    caller's, once for all replays in the process).
    """
    if recording.node_keys != BY_PATH:
        raise RecordingError(
            "this recording keeps its calls by node id (it was made before paths were kept): "
            "place them with `with_paths` and the spec it was recorded on first"
        )
    compiled = compile_spec(loaded)
    cassette = Cassette(recording.model_calls, recording.tool_calls, recording.a2a_calls)
    thread_id = new_thread_id()
    with playing(cassette), measuring_usage() as usage:
        driven = await drive_case(
            compiled, pool, thread_id, recording.input, recording.decisions, log
        )
    ending = await thread_ending(compiled, pool, thread_id)
    ending.usage = usage.as_root()
    if driven.error:
        ending.error = driven.error
    changes, failed = compare(recording.expected, ending)
    return ReplayResult(ending, changes, failed, cassette.unused())


def with_paths(recording: Recording, compiled: CompiledSpec) -> Recording:
    """``recording`` with its model replies and tool results kept by the path of the node
    that asked, as a replay asks for them.

    A file recorded before paths were kept holds node ids: ``compiled`` is the spec it
    was recorded on, and :func:`older_paths` says where each of those nodes ran.
    :class:`RecordingError` names the nodes it cannot place.
    """
    if recording.node_keys == BY_PATH:
        return recording
    older = {call.node for call in recording.model_calls}
    older |= {call.node for call in recording.tool_calls}
    placed = _placed_or_refused(older, compiled, "it was recorded")
    return replace(
        recording,
        model_calls=[replace(call, node=placed[call.node]) for call in recording.model_calls],
        tool_calls=[replace(call, node=placed[call.node]) for call in recording.tool_calls],
        node_keys=BY_PATH,
    )


def older_paths(
    nodes: Iterable[str], spec_places: Iterable[Place]
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Where each node of ``nodes`` ran, for records that kept only its id (made before a
    node's path among subgraphs was kept): the paths of those that can be placed, and the
    places each of the others could be.

    A node id found once in the spec and the specs it runs, outside any map item, ran
    there (at the top level its path is its id, so older records of top-level nodes keep
    their keys). One found at several places (in the spec and in a subgraph, or in a
    subgraph two nodes run) cannot be told apart, nor one in a map item's subgraph (which
    item is not known). One found nowhere keeps its id (a replay then says it diverged).

    A map whose ``do`` is an ``llm``, ``agent`` or ``tool`` is placed like any node (at
    its path, ``office/each``): such records hold all its items' calls together, which a
    replay's items, asking at ``office/each[i]``, share in call order as they did when
    recorded (:mod:`plait.engine.tools.cassette`).
    """
    found: dict[str, list[Place]] = {}
    for place in spec_places:
        found.setdefault(place.node_id, []).append(place)
    paths: dict[str, str] = {}
    unplaced: dict[str, list[str]] = {}
    for node in sorted(set(nodes)):
        where = found.get(node, [])
        if not where:
            paths[node] = node
        elif len(where) == 1 and where[0].item_of is None:
            paths[node] = where[0].path
        else:
            unplaced[node] = [place.path for place in where]
    return paths, unplaced


def _placed_or_refused(nodes: set[str], compiled: CompiledSpec, subject: str) -> dict[str, str]:
    """:func:`older_paths` of ``nodes`` in ``compiled``; :class:`RecordingError` naming
    those it cannot place (``subject``: what ran, or what the file is)."""
    if not nodes:
        return {}
    placed, unplaced = older_paths(nodes, places(compiled.loaded, compiled.nested))
    if not unplaced:
        return placed
    detail = "; ".join(
        f"node `{node}` could be {_either(f'`{path}`' for path in paths)}"
        for node, paths in unplaced.items()
    )
    if any("[i]" in path for paths in unplaced.values() for path in paths):
        detail += " (`[i]`: an item of that map, which one is not known)"
    raise RecordingError(
        f"{subject} on a Plait that kept only the id of the node making each model or tool "
        f"call, not where among subgraphs it ran, and {detail}: a replay could not tell "
        "their recorded calls apart; record a new run"
    )


def _either(names: Iterable[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    listed = list(names)
    return listed[0] if len(listed) == 1 else f"{', '.join(listed[:-1])} or {listed[-1]}"


def compare(expected: Ending, got: Ending) -> tuple[list[str], bool]:
    """What changed from ``expected`` to ``got``, and whether outcome or path did."""
    changes: list[str] = []
    failed = False
    if "diverged from the recording" in got.error:
        changes.append(got.error)
        failed = True
    if got.outcome != expected.outcome:
        changes.append(f"outcome: {expected.outcome} -> {got.outcome}")
        failed = True
    if got.steps != expected.steps:
        at = next(
            (
                i
                for i, pair in enumerate(zip(expected.steps, got.steps, strict=False))
                if pair[0] != pair[1]
            ),
            min(len(expected.steps), len(got.steps)),
        )
        was = expected.steps[at] if at < len(expected.steps) else "the end"
        now = got.steps[at] if at < len(got.steps) else "the end"
        changes.append(
            f"path: step {at + 1} was {was}, now {now} "
            f"(recorded {' > '.join(expected.steps) or 'none'}; "
            f"now {' > '.join(got.steps) or 'none'})"
        )
        failed = True
    if got.error != expected.error and "diverged from the recording" not in got.error:
        changes.append(f"error: {expected.error or 'none'!r} -> {got.error or 'none'!r}")
    for key, label in (("cost", "cost"), ("total_tokens", "tokens")):
        before, after = expected.usage.get(key, 0), got.usage.get(key, 0)
        if before != after:
            changes.append(
                f"{label}: {_number(before)} -> {_number(after)}{_percent(before, after)}"
            )
    changed = sorted(
        name
        for name in set(expected.state) | set(got.state)
        if expected.state.get(name) != got.state.get(name)
    )
    if changed:
        changes.append(f"state: {', '.join(changed)} changed")
    return changes, failed


async def _history(
    compiled: CompiledGraph, pool: Pool, thread_id: str
) -> tuple[dict[str, Any], list[Any], Ending]:
    """The thread's input, the decisions its approvals got in order, and its ending."""
    graph = compiled.bind(new_checkpointer(pool))
    config = {"configurable": {"thread_id": thread_id}}
    snapshots = [snapshot async for snapshot in graph.aget_state_history(config)]
    if not snapshots:
        raise RecordingError(f"thread {thread_id!r} has no checkpoint: nothing ran on it")
    snapshots.reverse()  # oldest first
    # Each checkpoint's pending writes, read in one query (a snapshot does not carry them):
    # the graph's, and its subgraphs' (each checkpointed in a namespace of its own).
    writes_of: dict[str, list[tuple[str, str, Any]]] = {}
    # The decisions taken at each checkpoint, by checkpoint id: ids grow with time in every
    # namespace, so they sort in the order the steps that waited for them began.
    taken: list[tuple[str, list[Any]]] = []
    every: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    async for stored in new_checkpointer(pool).alist(every):
        checkpoint_id = stored.config["configurable"]["checkpoint_id"]
        writes = list(stored.pending_writes or [])
        if not stored.config["configurable"].get("checkpoint_ns"):
            writes_of[checkpoint_id] = writes
        # An interrupt inside a subgraph is answered in the subgraph's task, not the node's.
        taken.append((checkpoint_id, _resumes(writes)))
    decisions = [
        answer for _, answers in sorted(taken, key=lambda pair: pair[0]) for answer in answers
    ]
    start: dict[str, Any] = {}
    steps: list[str] = []
    for snapshot in snapshots:
        steps.extend(sorted(name for name in snapshot.next if name != _START))
        writes = writes_of.get(snapshot.config["configurable"]["checkpoint_id"], [])
        if (snapshot.metadata or {}).get("source") == "input":
            for _task, channel, value in writes:
                if not channel.startswith(("__", "branch:")):
                    start[channel] = to_plain(value)
    last = snapshots[-1]
    errors = [str(task.error) for task in last.tasks if task.error]
    outcome: Outcome = (
        "interrupted"
        if any(task.interrupts for task in last.tasks)
        else "failed"
        if errors
        else "success"
    )
    return (
        start,
        decisions,
        Ending(outcome, steps, errors[0] if errors else "", to_plain(last.values)),
    )


def recorded_calls(
    rows: list[dict[str, Any]],
    a2a_nodes: set[str],
    thread_id: str,
    older: Mapping[str, str] | None = None,
) -> tuple[list[RecordedToolCall], list[RecordedA2aCall]]:
    """A thread's tool results (``rows``) as its tool calls and its ``a2a`` conversations.

    A tool call is kept under the path of its node (``row["path"]``); a record made
    before paths were kept has none, and ``older`` gives where its node ran
    (:func:`older_paths`; without it, its id). ``a2a_nodes`` are the spec's top-level
    ``a2a`` nodes: a turn record made before records kept the node's path is theirs.
    :class:`RecordingError` for such a record of another node (an ``a2a`` node inside
    a subgraph, recorded by an older Plait): which of the subgraphs' nodes it was is
    not known.
    """
    # An `a2a` node's records are the turns of its remote task, not tool results.
    turns = [row for row in rows if _a2a_turn(row)]
    unplaced = sorted(
        {row["node"] for row in turns if "path" not in row["args"] and row["node"] not in a2a_nodes}
    )
    if unplaced:
        raise RecordingError(
            f"thread {thread_id!r} sent messages to remote agents from inside subgraphs "
            f"({', '.join(unplaced)}) on a Plait that did not keep where those nodes ran, so "
            "a replay could not tell their answers apart; record a new run"
        )
    older = older or {}
    tools = [
        RecordedToolCall(
            node=row.get("path") or older.get(row["node"], row["node"]),
            tool=row["tool"],
            args=row["args"],
            result=row["result"],
        )
        for row in rows
        if not _a2a_turn(row)
    ]
    return tools, _conversations(turns)


def _a2a_turn(row: dict[str, Any]) -> bool:
    """Whether a row of the thread's tool results is an ``a2a`` node's turn record.

    An ``a2a`` node records its turns as tool ``a2a`` with the message it sent and
    the turn beside it in ``args`` (``engine/compiler/nodes/a2a.py``).
    """
    args = row["args"]
    return row["tool"] == "a2a" and isinstance(args, dict) and {"turn", "message"} <= set(args)


def _conversations(rows: list[dict[str, Any]]) -> list[RecordedA2aCall]:
    """Each ``a2a`` step's conversation from its turn records, oldest first.

    A step records what it sent at each turn (``{task_id, ...}``) and the remote
    task it got back (``reply``: the task's JSON); see ``engine/compiler/nodes/a2a.py``.
    A conversation holds its turns up to the first that got no answer. It is the
    node's by its path among subgraphs (``args.path``: ``engine/observability/node_path.py``);
    a record made before paths were kept is a top-level node's, whose path is its id.
    """
    sent: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    first: dict[tuple[str, str], dict[str, Any]] = {}
    replies: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for row in rows:
        args = dict(row["args"])
        turn, reply = int(args.pop("turn")), bool(args.pop("reply", False))
        where = str(args.pop("path", row["node"]))
        value = dict(row["result"])
        if reply:
            replies.setdefault((where, str(value["id"])), {})[turn] = value
        else:
            call = (where, str(value.pop("task_id")))
            first.setdefault(call, args)
            sent.setdefault(call, {})[turn] = value
    conversations = []
    for call, turns_sent in sent.items():
        answers = replies.get(call, {})
        turns = []
        for turn in count():
            if turn not in turns_sent or turn not in answers:
                break
            # What turn 0 sent is the step's message (in `args`); later turns, a decision.
            decision = turns_sent[turn] if turn else None
            turns.append(RecordedA2aTurn(decision=decision, task=answers[turn]))
        conversations.append(RecordedA2aCall(node=call[0], args=first[call], turns=turns))
    return conversations


def _resumes(writes: list[tuple[str, str, Any]]) -> list[Any]:
    """The decisions given at one checkpoint, in order.

    A task that took its answer wrote it as a list (one per interrupt it raised);
    ``Command(resume=...)`` also writes the answer under no task (a value, or a
    map by interrupt id), which counts only when no task took one.
    """
    taken = [value for task, channel, value in writes if channel == _RESUME and task != _NO_TASK]
    if taken:
        return [
            answer for value in taken for answer in (value if isinstance(value, list) else [value])
        ]
    given = [value for task, channel, value in writes if channel == _RESUME]
    return [
        answer
        for value in given
        for answer in (value.values() if isinstance(value, dict) and _by_id(value) else [value])
    ]


def _by_id(value: dict[str, Any]) -> bool:
    """Whether a resume value is a map by interrupt id (32 hex digits each)."""
    return bool(value) and all(len(key) == 32 and key.isalnum() for key in value)


def _model_nodes(loaded: LoadedSpec) -> set[str]:
    """The top-level nodes that call a model: `llm`, `agent`, and maps of them."""
    return {
        name
        for name, node in loaded.spec.spec.nodes.items()
        if node.kind in ("agent", "llm")
        or (isinstance(node, MapNode) and node.do.kind in ("agent", "llm"))
    }


def _number(value: Any) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def _percent(before: Any, after: Any) -> str:
    if not before:
        return ""
    return f" ({(after - before) / before * 100:+.0f}%)"
