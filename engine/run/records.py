"""What a run is recorded as, and the record keeper a caller gives the runner.

The runner (:mod:`plait.engine.run.runner`) pins a thread to the spec it
started on and says how each run ended; where that is kept is the caller's:
``plait run`` and ``plait test`` give the server's record of runs and threads
(``plait.server.queue.direct_runs``, the one owner of those tables' SQL), a
library caller may give none. A run's status (the Agent Server's ``RunStatus``)
and Plait's finer state are :mod:`plait.engine.run.states`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from plait.engine.run.states import RunState
from plait.engine.spec.migrations import migration_hint


@dataclass(frozen=True)
class ThreadRecord:
    """The graph a thread was started with; it resumes only on the same digest."""

    thread_id: str
    graph: str
    version: str
    digest: str
    git_sha: str | None
    created_at: datetime
    updated_at: datetime


class ThreadSpecMismatch(Exception):
    """A thread was started on another graph, version or digest than the one given.

    ``migration_declared`` (another version of the same graph only) says whether
    that version declares a migration from the thread's: the message then says to
    upgrade the thread, or which ``migrations`` entry to declare.
    """

    def __init__(
        self,
        existing: ThreadRecord,
        graph: str,
        version: str,
        digest: str,
        migration_declared: bool | None = None,
    ) -> None:
        self.existing = existing
        ran = (
            f"thread {existing.thread_id!r} runs {existing.graph}@{existing.version} "
            f"(digest {existing.digest[:12]}), not {graph}@{version} (digest {digest[:12]})"
        )
        if existing.graph != graph or existing.version == version or migration_declared is None:
            advice = "run the spec it started with, or start a new thread"
        elif migration_declared:
            advice = (
                f"{graph}@{version} declares a migration from {existing.version}: upgrade the "
                "thread first (POST /threads/{id}/upgrade, "
                f"`plait upgrade THREAD --to {version}`)"
            )
        else:
            advice = (
                f"to move it, {migration_hint(graph, existing.version, version)}; or run "
                f"{existing.graph}@{existing.version}, or start a new thread"
            )
        super().__init__(f"{ran}; {advice}")


class RunLog(Protocol):
    """Where the runner records threads and runs (see the module docstring)."""

    async def get_thread(self, thread_id: str) -> ThreadRecord | None:
        """The thread's record, or ``None`` when no run was ever started on it."""
        ...

    async def claim_thread(
        self, thread_id: str, *, graph: str, version: str, digest: str, git_sha: str | None
    ) -> ThreadRecord:
        """Record the thread's graph on its first run; raise :class:`ThreadSpecMismatch`
        when it exists on another graph, version or digest."""
        ...

    async def start_run(self, run_id: str, thread: ThreadRecord) -> None:
        """Record that a run started on ``thread``."""
        ...

    async def finish_run(
        self,
        run_id: str,
        state: RunState,
        error: str | None,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        """Record how the run ended, as Plait's ``state`` (:mod:`plait.engine.run.states`:
        it implies the Agent Server status) and its ``detail``; ``error`` is the message
        shown to users."""
        ...
