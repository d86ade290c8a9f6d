"""The run driver: a run's context and drive loop (the server's workers use them too), and
``plait run``'s start, resume and inspect of a thread, with the events it yields (made from
the driver's stream items) and the record keeper it is given (``records.RunLog``).

The surface loads on first use (``plait.engine.surfaces``): it is the top of the engine,
and the CLI's views need the event types without the compiler and tools behind the runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.engine.surfaces import on_first_use

if TYPE_CHECKING:
    from plait.engine.run.context import RunContext
    from plait.engine.run.driver import Item, RunTimedOut, drive
    from plait.engine.run.events import (
        Completed,
        Custom,
        Failed,
        Interrupted,
        NodeFailed,
        NodeFinished,
        NodeStarted,
        RunEvent,
        RunStarted,
        Token,
    )
    from plait.engine.run.graders import (
        GRADED_STATES,
        GraderFailed,
        Score,
        grade,
        graders_owed,
        sampled,
    )
    from plait.engine.run.marks import RunMarks
    from plait.engine.run.records import ThreadRecord, ThreadSpecMismatch
    from plait.engine.run.replay import (
        Recording,
        RecordingError,
        ReplayResult,
        record_thread,
        replay_recording,
        with_paths,
    )
    from plait.engine.run.runner import (
        RunRejected,
        ThreadMismatch,
        check_input,
        inspect_thread,
        new_thread_id,
        run_graph,
    )
    from plait.engine.run.spec_tests import CaseResult, counting_usage, run_case, tests_of
    from plait.engine.run.states import (
        STATES,
        ForbiddenTransition,
        RunState,
        RunStatus,
        a2a_state_of,
        check_ending,
        check_transition,
        losses_only,
        parked_tool,
        settled_state,
        sources_of,
        state_label,
        status_of,
        waiting_on,
        waits_until,
    )
    from plait.engine.run.upgrades import UpgradedCheckpoint, UpgradeRefused, upgrade_checkpoint

__all__ = [
    "GRADED_STATES",
    "STATES",
    "CaseResult",
    "Completed",
    "Custom",
    "Failed",
    "ForbiddenTransition",
    "GraderFailed",
    "Interrupted",
    "Item",
    "NodeFailed",
    "NodeFinished",
    "NodeStarted",
    "Recording",
    "RecordingError",
    "ReplayResult",
    "RunContext",
    "RunEvent",
    "RunMarks",
    "RunRejected",
    "RunStarted",
    "RunState",
    "RunStatus",
    "RunTimedOut",
    "Score",
    "ThreadMismatch",
    "ThreadRecord",
    "ThreadSpecMismatch",
    "Token",
    "UpgradeRefused",
    "UpgradedCheckpoint",
    "a2a_state_of",
    "check_ending",
    "check_input",
    "check_transition",
    "counting_usage",
    "drive",
    "grade",
    "graders_owed",
    "inspect_thread",
    "losses_only",
    "new_thread_id",
    "parked_tool",
    "record_thread",
    "replay_recording",
    "run_case",
    "run_graph",
    "sampled",
    "settled_state",
    "sources_of",
    "state_label",
    "status_of",
    "tests_of",
    "upgrade_checkpoint",
    "waiting_on",
    "waits_until",
    "with_paths",
]

if not TYPE_CHECKING:
    __getattr__ = on_first_use(
        __name__,
        {
            "context": ("RunContext",),
            "driver": ("Item", "RunTimedOut", "drive"),
            "events": (
                "Completed",
                "Custom",
                "Failed",
                "Interrupted",
                "NodeFailed",
                "NodeFinished",
                "NodeStarted",
                "RunEvent",
                "RunStarted",
                "Token",
            ),
            "graders": (
                "GRADED_STATES",
                "GraderFailed",
                "Score",
                "grade",
                "graders_owed",
                "sampled",
            ),
            "marks": ("RunMarks",),
            "records": ("ThreadRecord", "ThreadSpecMismatch"),
            "replay": (
                "Recording",
                "RecordingError",
                "ReplayResult",
                "record_thread",
                "replay_recording",
                "with_paths",
            ),
            "upgrades": ("UpgradeRefused", "UpgradedCheckpoint", "upgrade_checkpoint"),
            "runner": (
                "RunRejected",
                "ThreadMismatch",
                "check_input",
                "inspect_thread",
                "new_thread_id",
                "run_graph",
            ),
            "spec_tests": ("CaseResult", "counting_usage", "run_case", "tests_of"),
            "states": (
                "STATES",
                "ForbiddenTransition",
                "RunState",
                "RunStatus",
                "a2a_state_of",
                "check_ending",
                "check_transition",
                "losses_only",
                "parked_tool",
                "settled_state",
                "sources_of",
                "state_label",
                "status_of",
                "waiting_on",
                "waits_until",
            ),
        },
    )
