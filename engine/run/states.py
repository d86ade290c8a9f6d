"""A run's state as Plait tells it, and the one table of how it may change.

``plait_runs.status`` keeps the Agent Server's vocabulary (:data:`RunStatus`),
which is all the LangGraph SDKs know. Beside it Plait keeps a finer
:data:`RunState` that says what happened: a map that lost items, a run
waiting on a person or on a tool, a retry, a dead letter. This module owns
the states, the transitions allowed between them (:func:`check_transition`), the Agent
Server status and A2A task state each maps to, and the words a person reads
(:func:`state_label`). Every writer of a run's status asks it first.

A state's *detail* (``plait_runs.state_detail``) carries what the label needs:
``lost_items``/``items``/``maps`` for a map that lost items (kept through
later states of the run), ``retry`` while a call or the run waits to try
again, ``waiting`` for what a parked run waits on (``until``: the earliest time
a ``wait`` node's timer fires), ``expires_at`` for an expired run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

#: The Agent Server's run statuses: all the LangGraph SDKs know (``plait_runs.status``).
RunStatus = Literal["pending", "running", "success", "error", "interrupted", "timeout"]

RunState = Literal[
    "queued",
    "running",
    "retrying",
    "waiting_for_person",
    "waiting_for_tool",
    "waiting_for_timer",
    "succeeded",
    "partially_succeeded",
    "failed",
    "timed_out",
    "cancelled",
    "dead_lettered",
    "expired",
]

STATES: tuple[RunState, ...] = get_args(RunState)


@dataclass(frozen=True)
class StateInfo:
    """What one state means and how it shows to clients that know only coarser states."""

    meaning: str
    #: The Agent Server run status the state is stored with (``plait_runs.status``).
    status: RunStatus
    #: The A2A task state (``a2a.types.TaskState`` name) of a task whose run is here.
    a2a: str
    #: No transition leaves it (except a requeue of a dead letter).
    final: bool


INFO: dict[RunState, StateInfo] = {
    "queued": StateInfo("accepted, waiting for a worker", "pending", "TASK_STATE_SUBMITTED", False),
    "running": StateInfo("a worker executes it", "running", "TASK_STATE_WORKING", False),
    "retrying": StateInfo(
        "waiting to try again: a call failed and backs off, or its worker was lost and "
        "another continues it",
        "running",
        "TASK_STATE_WORKING",
        False,
    ),
    "waiting_for_person": StateInfo(
        "stopped on an approval; a person's decision resumes the thread",
        "success",
        "TASK_STATE_INPUT_REQUIRED",
        False,
    ),
    "waiting_for_tool": StateInfo(
        "stopped on a long-running tool (an MCP task); its result resumes the thread",
        "success",
        "TASK_STATE_WORKING",
        False,
    ),
    "waiting_for_timer": StateInfo(
        "stopped on a `wait` node; its durable timer (or a person's early answer) resumes "
        "the thread",
        "success",
        "TASK_STATE_WORKING",
        False,
    ),
    "succeeded": StateInfo("reached its end", "success", "TASK_STATE_COMPLETED", True),
    "partially_succeeded": StateInfo(
        "reached its end, but a map lost items (allowed by its min_success)",
        "success",
        "TASK_STATE_COMPLETED",
        True,
    ),
    "failed": StateInfo("stopped on an error", "error", "TASK_STATE_FAILED", True),
    "timed_out": StateInfo("ran past its spec's timeout", "timeout", "TASK_STATE_FAILED", True),
    "cancelled": StateInfo(
        "cancelled (interrupt, rollback, or a newer run's multitask strategy)",
        "interrupted",
        "TASK_STATE_CANCELED",
        True,
    ),
    "dead_lettered": StateInfo(
        "its attempts kept losing their worker; ended without running again until requeued",
        "error",
        "TASK_STATE_FAILED",
        True,
    ),
    # `error`: the SDKs know no status for a run that never ran, and `error` with a
    # message is what they show; `timeout` would say it ran too long.
    "expired": StateInfo(
        "its deadline (`expires_at`) passed before a worker claimed it; it never ran",
        "error",
        "TASK_STATE_FAILED",
        True,
    ),
}

_ENDS: frozenset[RunState] = frozenset(
    {
        "waiting_for_person",
        "waiting_for_tool",
        "waiting_for_timer",
        "succeeded",
        "partially_succeeded",
        "failed",
        "timed_out",
        "cancelled",
    }
)

#: Allowed transitions: ``state -> states it may become``.
TRANSITIONS: dict[RunState, frozenset[RunState]] = {
    # A pending run is claimed, cancelled, expired past its deadline (the
    # workers' sweep), or (a CLI run) recorded as it ends.
    "queued": frozenset({"running", "cancelled", "expired"}),
    # `queued`: handed back on shutdown. `retrying`: a call backs off, or the
    # lease expired and another worker took the run over. `dead_lettered`: the
    # claim that takes a run over finds its lost attempts at the limit.
    "running": _ENDS | {"queued", "retrying", "dead_lettered"},
    "retrying": _ENDS | {"running", "retrying", "queued", "dead_lettered"},
    # A parked run is settled when its thread moves on (an answer, a new input).
    "waiting_for_person": frozenset({"succeeded", "partially_succeeded"}),
    "waiting_for_tool": frozenset({"succeeded", "partially_succeeded"}),
    # Also cancelled: cancelling a run that waits for its timer cancels the timer.
    "waiting_for_timer": frozenset({"succeeded", "partially_succeeded", "cancelled"}),
    "succeeded": frozenset(),
    "partially_succeeded": frozenset(),
    "failed": frozenset(),
    "timed_out": frozenset(),
    "cancelled": frozenset(),
    "expired": frozenset(),
    # Requeued by an operator (POST .../requeue, plait queue requeue).
    "dead_lettered": frozenset({"queued"}),
}


class ForbiddenTransition(ValueError):
    """A run asked to move between two states the table does not connect."""

    def __init__(self, before: str, after: str) -> None:
        known = TRANSITIONS.get(cast(RunState, before), frozenset())
        allowed = ", ".join(sorted(known)) or "none"
        super().__init__(
            f"a run cannot go from {before!r} to {after!r} (allowed from {before!r}: {allowed})"
        )


def check_transition(before: str, after: str) -> RunState:
    """``after`` when a run in ``before`` may become it; :class:`ForbiddenTransition` if not."""
    if after not in TRANSITIONS.get(cast(RunState, before), frozenset()):
        raise ForbiddenTransition(before, after)
    return after


#: What a run's finish records: an end, a wait on a person or a tool, or a dead letter.
ENDINGS: frozenset[RunState] = _ENDS | {"dead_lettered"}


def check_ending(state: str) -> RunState:
    """``state`` when a run's finish may record it (:data:`ENDINGS`); ``ValueError`` if not."""
    if state not in ENDINGS:
        raise ValueError(
            f"{state!r} is not how a run ends; a finish records one of {', '.join(sorted(ENDINGS))}"
        )
    return state


def sources_of(after: RunState) -> tuple[RunState, ...]:
    """The states a run may be in to become ``after`` (for a statement's ``WHERE``)."""
    return tuple(state for state in STATES if after in TRANSITIONS[state])


def status_of(state: RunState) -> RunStatus:
    """The Agent Server status a run in ``state`` is stored and shown with."""
    return INFO[state].status


def a2a_state_of(state: str) -> str:
    """The A2A task state name of a task whose run is in ``state``."""
    info = INFO.get(cast(RunState, state))
    return info.a2a if info is not None else "TASK_STATE_UNSPECIFIED"


def settled_state(detail: Mapping[str, Any] | None) -> RunState:
    """What a run that reached its end (or a parked run whose thread moved on) counts as."""
    return "partially_succeeded" if lost_items(detail) else "succeeded"


def waiting_on(interrupts: Sequence[Mapping[str, Any]]) -> RunState:
    """The state of a run that stopped on ``interrupts`` (``{id, value}``).

    A person is asked by an approval (the approval node, or an MCP task's
    question); an interrupt naming a parked MCP task waits on the tool; a
    ``wait`` node's on its timer. A person among them: the person, who is the
    one to act; tools and timers: the tool.
    """
    timers = [item for item in interrupts if waits_until(item.get("value")) is not None]
    tools = [item for item in interrupts if parked_tool(item.get("value")) is not None]
    if not interrupts or len(tools) + len(timers) < len(interrupts):
        return "waiting_for_person"
    return "waiting_for_tool" if tools else "waiting_for_timer"


def waits_until(value: Any) -> str | None:
    """The ISO time a ``wait`` node's interrupt value waits until, else ``None``."""
    if not isinstance(value, Mapping) or value.get("kind") != "wait":
        return None
    until = value.get("until")
    return str(until) if until else None


def parked_tool(value: Any) -> str | None:
    """The ``server/tool`` an interrupt's value parks on (an MCP task), else ``None``."""
    if not isinstance(value, Mapping) or value.get("plait") != "mcp_task":
        return None
    server, tool = value.get("server"), value.get("tool")
    return f"{server}/{tool}" if server else str(tool)


def lost_items(detail: Mapping[str, Any] | None) -> int:
    """How many map items the run lost so far (0 without a detail)."""
    if not detail:
        return 0
    value = detail.get("lost_items")
    return int(value) if isinstance(value, int) else 0


def with_losses(detail: Mapping[str, Any] | None, maps: list[Mapping[str, Any]]) -> dict[str, Any]:
    """``detail`` with its map losses replaced by ``maps`` (``{node, items, lost}`` each)."""
    kept = {k: v for k, v in (detail or {}).items() if k not in ("lost_items", "items", "maps")}
    lossy = [dict(entry) for entry in maps if int(entry.get("lost", 0)) > 0]
    if not lossy:
        return kept
    return {
        **kept,
        "lost_items": sum(int(entry["lost"]) for entry in lossy),
        "items": sum(int(entry["items"]) for entry in lossy),
        "maps": lossy,
    }


def losses_only(detail: Mapping[str, Any] | None) -> dict[str, Any]:
    """The part of ``detail`` that outlives a state change: the map losses."""
    return {k: v for k, v in (detail or {}).items() if k in ("lost_items", "items", "maps")}


def state_label(state: str, detail: Mapping[str, Any] | None = None) -> str:
    """The state in words for a person, e.g. ``partial: 3 of 5 items lost``."""
    detail = detail or {}
    if state == "partially_succeeded":
        lost, items = lost_items(detail), detail.get("items")
        return f"partial: {lost} of {items} items lost" if items else "partial"
    if state == "retrying":
        retry = detail.get("retry") or {}
        if retry.get("reason") == "worker_lost":
            return f"retrying: worker lost (attempt {retry.get('attempt', '?')})"
        target = retry.get("target")
        if target:
            return f"retrying {target} (attempt {int(retry.get('attempt', 1)) + 1})"
        return "retrying"
    if state == "waiting_for_person":
        return "waiting for a person"
    if state == "waiting_for_tool":
        tools = (detail.get("waiting") or {}).get("tools") or []
        return f"waiting for {', '.join(tools)}" if tools else "waiting for a tool"
    if state == "expired":
        deadline = detail.get("expires_at")
        return f"expired: not started by {deadline}" if deadline else "expired"
    if state == "waiting_for_timer":
        until = (detail.get("waiting") or {}).get("until")
        return f"waiting until {until}" if until else "waiting for a timer"
    return state.replace("_", " ")
