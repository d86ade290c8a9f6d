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
    from plait.engine.run.records import RunStatus, ThreadRecord, ThreadSpecMismatch
    from plait.engine.run.runner import (
        RunRejected,
        ThreadMismatch,
        check_input,
        inspect_thread,
        new_thread_id,
        run_graph,
    )
    from plait.engine.run.spec_tests import CaseResult, counting_usage, run_case, tests_of

__all__ = [
    "CaseResult",
    "Completed",
    "Custom",
    "Failed",
    "Interrupted",
    "Item",
    "NodeFailed",
    "NodeFinished",
    "NodeStarted",
    "RunContext",
    "RunEvent",
    "RunRejected",
    "RunStarted",
    "RunStatus",
    "RunTimedOut",
    "ThreadMismatch",
    "ThreadRecord",
    "ThreadSpecMismatch",
    "Token",
    "check_input",
    "counting_usage",
    "drive",
    "inspect_thread",
    "new_thread_id",
    "run_case",
    "run_graph",
    "tests_of",
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
            "records": ("RunStatus", "ThreadRecord", "ThreadSpecMismatch"),
            "runner": (
                "RunRejected",
                "ThreadMismatch",
                "check_input",
                "inspect_thread",
                "new_thread_id",
                "run_graph",
            ),
            "spec_tests": ("CaseResult", "counting_usage", "run_case", "tests_of"),
        },
    )
