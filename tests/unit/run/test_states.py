"""Run states: the one table of transitions and the mappings to the Agent Server and A2A."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

import pytest
from a2a.types.a2a_pb2 import TaskState

from plait.engine.run.marks import RunMarks
from plait.engine.run.states import (
    INFO,
    STATES,
    TRANSITIONS,
    ForbiddenTransition,
    RunStatus,
    a2a_state_of,
    check_ending,
    check_transition,
    sources_of,
    state_label,
    status_of,
    waiting_on,
)


def test_every_state_maps_to_an_agent_server_status_and_an_a2a_task_state() -> None:
    assert set(INFO) == set(STATES) == set(TRANSITIONS)
    for state in STATES:
        assert status_of(state) in get_args(RunStatus)
        assert TaskState.Value(a2a_state_of(state)) != TaskState.TASK_STATE_UNSPECIFIED
    # The SDKs see what the Agent Server would say.
    assert status_of("partially_succeeded") == "success"
    assert status_of("waiting_for_person") == status_of("waiting_for_tool") == "success"
    assert status_of("dead_lettered") == "error"
    assert status_of("cancelled") == "interrupted"
    assert a2a_state_of("waiting_for_person") == "TASK_STATE_INPUT_REQUIRED"
    assert a2a_state_of("waiting_for_tool") == "TASK_STATE_WORKING"
    assert a2a_state_of("no such state") == "TASK_STATE_UNSPECIFIED"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("succeeded", "running"),  # an ended run never runs again
        ("failed", "queued"),  # only a dead letter is requeued
        ("queued", "succeeded"),  # nothing ends without running
        ("waiting_for_person", "failed"),  # a parked run is settled, never failed later
        ("dead_lettered", "running"),  # a requeue queues it first
        ("running", "sleeping"),  # no such state
    ],
)
def test_a_forbidden_transition_is_an_error(before: str, after: str) -> None:
    with pytest.raises(ForbiddenTransition, match=f"cannot go from '{before}' to '{after}'"):
        check_transition(before, after)


def test_allowed_transitions_and_their_sources() -> None:
    assert check_transition("running", "partially_succeeded") == "partially_succeeded"
    assert check_transition("retrying", "running") == "running"
    assert check_transition("dead_lettered", "queued") == "queued"
    # What a run's finish may record: an end or a wait, never a live state.
    assert check_ending("waiting_for_tool") == "waiting_for_tool"
    with pytest.raises(ValueError, match="'retrying' is not how a run ends"):
        check_ending("retrying")
    assert set(sources_of("running")) == {"queued", "retrying"}
    assert "succeeded" not in sources_of("succeeded")
    final = [state for state in STATES if INFO[state].final]
    assert all(TRANSITIONS[state] <= {"queued"} for state in final)


def test_waiting_on_a_person_or_a_tool_is_told_by_the_interrupt() -> None:
    approval: dict[str, Any] = {"id": "a", "value": {"kind": "approval", "action": "refund"}}
    parked: dict[str, Any] = {"id": "t", "value": {"plait": "mcp_task", "server": "s", "tool": "x"}}
    assert waiting_on([approval]) == "waiting_for_person"
    assert waiting_on([parked]) == "waiting_for_tool"
    # Both: the person is the one to act.
    assert waiting_on([parked, approval]) == "waiting_for_person"
    wait: dict[str, Any] = {"id": "w", "value": {"kind": "wait", "node": "n", "until": "2030"}}
    assert waiting_on([wait]) == "waiting_for_timer"
    assert waiting_on([wait, approval]) == "waiting_for_person"
    assert waiting_on([wait, parked]) == "waiting_for_tool"


def test_a_run_waiting_for_its_timer_may_be_cancelled_or_settled() -> None:
    assert status_of("waiting_for_timer") == "success"  # thread `interrupted`, as for a person
    assert a2a_state_of("waiting_for_timer") == "TASK_STATE_WORKING"
    assert check_transition("waiting_for_timer", "cancelled") == "cancelled"
    assert check_transition("waiting_for_timer", "succeeded") == "succeeded"
    assert check_ending("waiting_for_timer") == "waiting_for_timer"
    with pytest.raises(ForbiddenTransition):
        check_transition("waiting_for_person", "cancelled")


def test_labels_say_what_happened() -> None:
    detail = {"lost_items": 3, "items": 5, "maps": [{"node": "fan", "items": 5, "lost": 3}]}
    assert state_label("partially_succeeded", detail) == "partial: 3 of 5 items lost"
    assert state_label("retrying", {"retry": {"reason": "worker_lost", "attempt": 2}}) == (
        "retrying: worker lost (attempt 2)"
    )
    assert state_label("retrying", {"retry": {"target": "tool:fetch", "attempt": 1}}) == (
        "retrying tool:fetch (attempt 2)"
    )
    assert state_label("waiting_for_tool", {"waiting": {"tools": ["slow/job"]}}) == (
        "waiting for slow/job"
    )
    until = "2026-12-03T15:00:00+00:00"
    assert state_label("waiting_for_timer", {"waiting": {"until": until}}) == (
        f"waiting until {until}"
    )
    assert state_label("waiting_for_timer") == "waiting for a timer"
    assert state_label("timed_out") == "timed out"


def test_marks_count_a_retried_maps_losses_once_and_back_off_then_run() -> None:
    marks = RunMarks()
    lost = {"plait": "map_lost", "node": "fan", "task": "fan:1", "items": 5, "lost": 3}
    assert marks.observe(((), "custom", lost))
    assert marks.observe(((), "custom", lost))  # the step retried: the same task
    # A subgraph's map is not counted (its stream reaches a worker only on request).
    assert not marks.observe((("sub:2",), "custom", {**lost, "task": "sub:2|fan:1"}))
    assert marks.ended() == "partially_succeeded"
    assert marks.losses() == {
        "lost_items": 3,
        "items": 5,
        "maps": [{"node": "fan", "task": "fan:1", "items": 5, "lost": 3}],
    }
    retry = {"plait": "retry", "target": "tool:x", "attempt": 1, "delay": 30.0}
    assert marks.observe(((), "custom", retry))
    state, detail = marks.live()
    assert state == "retrying" and detail is not None and detail["retry"]["target"] == "tool:x"
    assert detail["lost_items"] == 3
    # A later attempt starts from what the earlier ones lost.
    assert RunMarks(marks.losses()).ended() == "partially_succeeded"
    assert RunMarks().live() == ("running", None)


def test_the_operations_guide_maps_every_state_as_the_code_does() -> None:
    guide = Path(__file__).resolve().parents[3] / "docs" / "operations.md"
    rows = re.findall(
        r"^\| `(\w+)` \| .+ \| `(\w+)`(?: \(thread `interrupted`\))? \| `(TASK_STATE_\w+)` \|$",
        guide.read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    assert {state: (status, a2a) for state, status, a2a in rows} == {
        state: (info.status, info.a2a) for state, info in INFO.items()
    }
