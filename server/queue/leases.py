"""A worker's lease on a run, and the fence that refuses its writes once it is lost.

A claim hands a run to one worker for one attempt: the claim bumps the run's
``attempt``, so ``(run_id, worker id, attempt)`` names that claim and no other,
even when a worker claims the same run again or two workers were started with
the same ``--id``. Every write a worker makes for a run checks it, in the
statement or transaction that writes (docs/decisions.md 61):

- the queue's and the journal's own statements (heartbeat, journal appends,
  ``finish_run``, ``release_run``) match it in their ``WHERE``;
- the others (checkpoints, tool results, approvals, deleting a rolled-back
  run's checkpoints) begin their transaction with :func:`fence`, the SQL
  function ``plait_fence``, which holds the run row until the write commits
  and raises when the lease is not held (:class:`LeaseLost`).

A lease that expired but was not taken over is still held: nothing else
wrote for the run meanwhile, so the late writes of a worker that was only slow
are consistent, and its next heartbeat renews the lease.

A fenced write's transaction (and a claim's) also tells Postgres to end the
session if its client goes silent until the lease would expire, plus a
second (``plait_hold_session``, migration 0011): a worker cut off in the
middle of one must not keep the run's row, or the claim lock, until its link
comes back, since a takeover skips locked rows.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, nullcontext
from dataclasses import dataclass

import psycopg
from psycopg import AsyncConnection, AsyncCursor
from psycopg.rows import DictRow

from plait.engine.governance import StopsRun
from plait.engine.store import Pool, pipelined_transaction

log = logging.getLogger("plait.run")

#: SQLSTATE ``plait_fence`` raises (migration 0011).
FENCE_SQLSTATE = "PLA01"
_FENCE = "SELECT plait_fence(%s, %s, %s)"


@dataclass(frozen=True)
class Lease:
    """One claim of a run: the worker that holds it and the attempt it started."""

    run_id: str
    owner: str
    attempt: int


class LeaseLost(StopsRun):
    """A write was refused: the worker no longer holds the run's lease for this attempt.

    Another worker took the run over (this one died, stalled or was cut off
    for longer than the lease), or the run ended or was deleted. A
    :class:`~plait.engine.governance.loops.StopsRun`, so a node neither retries it nor
    hands it to a model: the stale attempt stops.
    """

    def __init__(self, lease: Lease, what: str) -> None:
        message = (
            f"{what} refused: run {lease.run_id} attempt {lease.attempt} is no longer "
            f"executed by {lease.owner} (its lease was lost)"
        )
        Exception.__init__(self, message)
        self.node = "-"
        self.message = message
        self.transient = False
        self.lease = lease
        self.what = what


def fence_query(lease: Lease) -> tuple[str, tuple[str, str, int]]:
    """The fence as a query and its parameters, for a statement that begins with it."""
    return _FENCE, (lease.run_id, lease.owner, lease.attempt)


async def fence(target: AsyncConnection[DictRow] | AsyncCursor[DictRow], lease: Lease) -> None:
    """Send the fence as the next statement of the caller's transaction (see the module doc).

    Its failure surfaces where the caller reads a result or commits (in
    pipeline mode, at the sync): wrap the transaction in :func:`refused_as`.
    """
    await target.execute(*fence_query(lease))


@contextmanager
def refused_as(lease: Lease, what: str) -> Iterator[None]:
    """Turn the fence's error (or an aborted pipeline after it) into :class:`LeaseLost`.

    Each refusal is logged: it is the trace a partition leaves on the worker it cut off.
    """
    try:
        yield
    except psycopg.Error as exc:
        if _fenced(exc):
            lost = LeaseLost(lease, what)
            log.warning("%s", lost.message, extra={"plait_status": "fenced"})
            raise lost from None
        raise


@asynccontextmanager
async def fenced_transaction(
    pool: Pool, lease: Lease | None, what: str, *, pipeline: bool = False
) -> AsyncIterator[AsyncConnection[DictRow]]:
    """A connection in a transaction that begins with the fence of ``lease`` (none: no fence).

    ``what`` names the write in :class:`LeaseLost`. With ``pipeline`` the fence
    and the caller's statements share round trips.
    """
    with refused_as(lease, what) if lease is not None else nullcontext():
        async with (
            pool.connection() as conn,
            pipelined_transaction(conn) if pipeline else conn.transaction(),
        ):
            if lease is not None:
                await fence(conn, lease)
            yield conn


def _fenced(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) is the fence's refusal."""
    while exc is not None:
        if isinstance(exc, psycopg.Error) and exc.sqlstate == FENCE_SQLSTATE:
            return True
        exc = exc.__cause__ or exc.__context__
    return False
