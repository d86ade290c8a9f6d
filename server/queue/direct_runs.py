"""Runs driven in the calling process (``plait run``, ``plait test``), outside the queue.

They are recorded on the queue's tables (``plait_threads``, ``plait_runs``)
without a lease, so the server lists them like its own and a killed one never
holds its thread. :class:`DirectRunLog` is the record keeper the engine's
runner is given (:class:`plait.engine.run.records.RunLog`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from plait.engine.run import (
    RunState,
    RunStatus,
    ThreadRecord,
    ThreadSpecMismatch,
    check_ending,
    check_transition,
    sources_of,
    status_of,
)
from plait.engine.store import Pool
from plait.server.queue import journal
from plait.server.queue.waiting import settle_waiting_in

# Explicit columns: the server's migration adds more to both tables.
_THREAD_COLUMNS = "thread_id, graph, version, digest, git_sha, created_at, updated_at"
_RUN_COLUMNS = (
    "run_id, thread_id, graph, version, digest, status, error, started_at, ended_at, "
    "state, state_detail"
)
_STARTED = check_transition("queued", "running")


@dataclass(frozen=True)
class RunRecord:
    """One run (one invocation or resume) on a thread."""

    run_id: str
    thread_id: str
    graph: str
    version: str
    digest: str
    status: RunStatus
    error: str | None
    started_at: datetime
    ended_at: datetime | None
    #: Plait's state beside ``status`` (:mod:`plait.engine.run.states`) and its detail.
    state: RunState = "running"
    state_detail: dict[str, Any] | None = None


async def claim_thread(
    pool: Pool,
    thread_id: str,
    *,
    graph: str,
    version: str,
    digest: str,
    git_sha: str | None = None,
) -> ThreadRecord:
    """Record the thread's graph on its first run; on later runs check it is the same.

    Raises ``ThreadSpecMismatch`` when the thread exists with another graph,
    version or digest. Safe when two processes claim the same new thread at once:
    the first insert wins and the other compares against it.
    """
    async with pool.connection() as conn:
        # A thread made through the HTTP API exists before its first run, with
        # no graph yet: the first run records it (the UPDATE), as for a new thread.
        await conn.execute(
            """
            INSERT INTO plait_threads (thread_id, graph, version, digest, git_sha)
            VALUES (%s, %s, %s, %s, %s)
            ON CONFLICT (thread_id) DO UPDATE
            SET graph = EXCLUDED.graph, version = EXCLUDED.version,
                digest = EXCLUDED.digest, git_sha = EXCLUDED.git_sha, updated_at = now()
            WHERE plait_threads.graph IS NULL
            """,
            (thread_id, graph, version, digest, git_sha),
        )
    existing = await get_thread(pool, thread_id)
    if existing is None:  # deleted between the two statements
        raise LookupError(f"thread {thread_id!r} disappeared while being claimed")
    if (existing.graph, existing.version, existing.digest) != (graph, version, digest):
        raise ThreadSpecMismatch(existing, graph, version, digest)
    return existing


async def get_thread(pool: Pool, thread_id: str) -> ThreadRecord | None:
    """The thread's record, or ``None`` when no run was ever started on it.

    A thread created through the HTTP API has no graph until its first run:
    for the CLI it is still new.
    """
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_THREAD_COLUMNS} FROM plait_threads "
            "WHERE thread_id = %s AND graph IS NOT NULL",
            (thread_id,),
        )
        row = await cursor.fetchone()
    return None if row is None else ThreadRecord(**row)


async def start_run(pool: Pool, run_id: str, thread: ThreadRecord) -> RunRecord:
    """Record that a run started on ``thread`` (status ``running``).

    The thread moves on: runs of it that waited on a person or a tool are settled.
    """
    async with pool.connection() as conn, conn.transaction():
        await conn.execute(
            "SELECT 1 FROM plait_threads WHERE thread_id = %s FOR NO KEY UPDATE",
            (thread.thread_id,),
        )
        await settle_waiting_in(conn, thread.thread_id)
        cursor = await conn.execute(
            f"""
            INSERT INTO plait_runs (run_id, thread_id, graph, version, digest, status, state)
            VALUES (%s, %s, %s, %s, %s, %s, %s)
            RETURNING {_RUN_COLUMNS}
            """,
            (
                run_id,
                thread.thread_id,
                thread.graph,
                thread.version,
                thread.digest,
                status_of(_STARTED),
                _STARTED,
            ),
        )
        row = await cursor.fetchone()
        await conn.execute(
            "UPDATE plait_threads SET updated_at = now() WHERE thread_id = %s",
            (thread.thread_id,),
        )
        # Streams that follow the thread from run to run wait for this (journal.new_runs).
        await conn.execute(
            "SELECT pg_notify(%s, %s)",
            (journal.EVENTS_CHANNEL, journal.thread_hint(thread.thread_id)),
        )
    return _run(row)


async def finish_run(
    pool: Pool,
    run_id: str,
    state: RunState,
    error: str | None = None,
    detail: Mapping[str, Any] | None = None,
) -> RunRecord:
    """Record how a run ended as Plait's ``state`` (its Agent Server status follows from it,
    :mod:`plait.engine.run.states`); ``error`` is the message shown to users.

    Raises :class:`~plait.engine.run.states.ForbiddenTransition` for a run that
    cannot end so (it ended before), ``LookupError`` for no such run.
    """
    async with pool.connection() as conn, conn.transaction():
        cursor = await conn.execute(
            f"""
            UPDATE plait_runs SET status = %s, state = %s, state_detail = %s, error = %s,
                ended_at = now(), updated_at = now()
            WHERE run_id = %s AND state = ANY(%s)
            RETURNING {_RUN_COLUMNS}
            """,
            (
                status_of(check_ending(state)),
                state,
                Jsonb(dict(detail)) if detail is not None else None,
                error,
                run_id,
                list(sources_of(state)),
            ),
        )
        row = await cursor.fetchone()
        if row is None:
            cursor = await conn.execute("SELECT state FROM plait_runs WHERE run_id = %s", (run_id,))
            found = await cursor.fetchone()
            if found is None:
                raise LookupError(f"no run {run_id!r}")
            check_transition(found["state"], state)  # raises: it ended before
            raise LookupError(f"run {run_id!r} changed while it was being ended")
        await conn.execute(
            "UPDATE plait_threads SET updated_at = now() WHERE thread_id = %s",
            (row["thread_id"],),
        )
    return _run(row)


async def get_run(pool: Pool, run_id: str) -> RunRecord | None:
    """One run, or ``None``."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM plait_runs WHERE run_id = %s", (run_id,)
        )
        row = await cursor.fetchone()
    return None if row is None else _run(row)


async def list_runs(pool: Pool, thread_id: str) -> list[RunRecord]:
    """The thread's runs, oldest first."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM plait_runs WHERE thread_id = %s "
            "ORDER BY started_at, run_id",
            (thread_id,),
        )
        rows = await cursor.fetchall()
    return [_run(row) for row in rows]


def _run(row: dict[str, Any] | None) -> RunRecord:
    if row is None:
        raise LookupError("the database returned no row")
    return RunRecord(**row)


@dataclass(frozen=True)
class DirectRunLog:
    """The runner's record keeper on ``pool`` (:class:`plait.engine.run.records.RunLog`)."""

    pool: Pool

    async def get_thread(self, thread_id: str) -> ThreadRecord | None:
        """See :func:`get_thread`."""
        return await get_thread(self.pool, thread_id)

    async def claim_thread(
        self, thread_id: str, *, graph: str, version: str, digest: str, git_sha: str | None
    ) -> ThreadRecord:
        """See :func:`claim_thread`."""
        return await claim_thread(
            self.pool, thread_id, graph=graph, version=version, digest=digest, git_sha=git_sha
        )

    async def start_run(self, run_id: str, thread: ThreadRecord) -> None:
        """See :func:`start_run`."""
        await start_run(self.pool, run_id, thread)

    async def finish_run(
        self,
        run_id: str,
        state: RunState,
        error: str | None,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        """See :func:`finish_run`."""
        await finish_run(self.pool, run_id, state, error, detail)
