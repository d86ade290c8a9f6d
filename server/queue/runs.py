"""The run queue on Postgres: the run row *is* the queue entry.

Creating a run applies the thread's ``multitask_strategy`` in the same
transaction that inserts it, under the thread row's lock, so two requests on
one thread never both see it idle. Workers claim runs with ``FOR UPDATE SKIP
LOCKED`` under a lease they renew with heartbeats; a run whose lease expired
(its worker died) is claimed again by any worker with ``attempt + 1``. Runs of
one thread run one at a time, in the order they were accepted (``queue_id``).

"Active" means pending, or running under a lease: CLI runs (no lease) are
outside the queue, and a killed CLI run left ``running`` never blocks a thread.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, cast

from psycopg import AsyncConnection, AsyncCursor
from psycopg.rows import DictRow
from psycopg.types.json import Json, Jsonb

from plait.engine.run import (
    RunState,
    RunStatus,
    ThreadRecord,
    ThreadSpecMismatch,
    check_ending,
    check_transition,
    losses_only,
    sources_of,
    state_label,
    status_of,
)
from plait.engine.spec import find_migration
from plait.engine.store import Pool, pipelined_transaction
from plait.server.approvals.records import settle_answered_in
from plait.server.auth.store import DAILY_LIMIT_FIELDS, DEFAULT_TENANT, OF_TENANT
from plait.server.graphs.versions import GraphVersion
from plait.server.queue import journal, scores, timers, webhooks
from plait.server.queue.leases import Lease
from plait.server.queue.queueing import (
    DEFAULT_AGING_SECONDS,
    DEFAULT_PRIORITY,
    HIGHEST_PRIORITY,
    LOWEST_PRIORITY,
    Queueing,
)
from plait.server.queue.threads import ThreadNotFound, ThreadStatus, client_thread_id
from plait.server.queue.waiting import settle_waiting_in

MultitaskStrategy = Literal["reject", "enqueue", "interrupt", "rollback"]
CancelAction = Literal["interrupt", "rollback"]
IfNotExists = Literal["reject", "create"]

#: Channel that wakes workers when a run becomes claimable.
RUNS_CHANNEL = "plait_runs_pending"
MULTITASK_STRATEGIES: tuple[str, ...] = ("reject", "enqueue", "interrupt", "rollback")
TERMINAL: frozenset[str] = frozenset({"error", "success", "timeout", "interrupted"})

_COLUMNS = (
    "run_id, thread_id, assistant_id, graph, version, digest, status, kwargs, metadata, "
    "multitask_strategy, attempt, error, created_at, updated_at, cancel_action, "
    "lease_owner, lease_expires_at, queue_id, tenant_id, lost_attempts, max_attempts, dead_letter, "
    "state, state_detail, priority, expires_at"
)
# The same columns qualified by the alias ``r`` (statements joining plait_runs).
_R_COLUMNS = ", ".join("r." + c.strip() for c in _COLUMNS.split(","))
#: Advisory lock key serialising claims (the per-tenant cap is read, then filled).
_CLAIM_LOCK = 0x706C6169  # "plai"
# The tenant's daily limits as a JSON object (keys: DAILY_LIMIT_FIELDS).
_LIMITS_JSON = ", ".join(f"'{name}', t.{name}" for name in DAILY_LIMIT_FIELDS)
# A run that holds its thread: waiting, or executing under a worker's lease.
_ACTIVE = "(status = 'pending' OR (status = 'running' AND lease_owner IS NOT NULL))"
# The transitions the queue's statements make, checked once when this module loads
# (engine/run/states.py owns which are allowed).
_CLAIMED = check_transition("queued", "running")
_TAKEN_OVER = check_transition("running", "retrying")
_HANDED_BACK = check_transition("running", "queued")
_CANCELLED_PENDING = check_transition("queued", "cancelled")
_CANCELLED_WAIT = check_transition("waiting_for_timer", "cancelled")
_REQUEUED = check_transition("dead_lettered", "queued")
_EXPIRED = check_transition("queued", "expired")
_WAITING: tuple[RunState, ...] = ("waiting_for_person", "waiting_for_tool", "waiting_for_timer")


@dataclass(frozen=True)
class Run:
    """One run of a graph on a thread (a row of ``plait_runs``)."""

    run_id: str
    thread_id: str
    assistant_id: str
    graph: str
    version: str
    status: RunStatus
    kwargs: dict[str, Any]
    metadata: dict[str, Any]
    multitask_strategy: str
    attempt: int
    error: str | None
    created_at: datetime
    updated_at: datetime
    digest: str = ""
    cancel_action: CancelAction | None = None
    lease_owner: str | None = None
    lease_expires_at: datetime | None = None
    queue_id: int = 0
    tenant: str = DEFAULT_TENANT
    #: The tenant's daily limits as read by the claim that handed the run to a
    #: worker (``None``: not read, e.g. a run read by the API).
    tenant_limits: dict[str, Any] | None = None
    #: Attempts that lost their worker's lease (it died, stalled or was cut off).
    lost_attempts: int = 0
    #: The spec's ``max_attempts`` (``None``: the worker's ``--max-attempts``).
    max_attempts: int | None = None
    #: Why the run was dead-lettered: ``{reason, attempts, max_attempts, at}``.
    dead_letter: dict[str, Any] | None = None
    #: Plait's state beside ``status`` (:mod:`plait.engine.run.states`) and its detail.
    state: RunState = "queued"
    state_detail: dict[str, Any] | None = None
    #: 0 (lowest) to 9: which of its tenant's queued runs a worker takes first.
    priority: int = DEFAULT_PRIORITY
    #: A pending run not claimed by then ends ``expired`` (``None``: no deadline).
    expires_at: datetime | None = None

    @property
    def lease(self) -> Lease:
        """The claim a worker holds this run under (read from a claimed run)."""
        if self.lease_owner is None:
            raise ValueError(f"run {self.run_id} is not leased to a worker")
        return Lease(self.run_id, self.lease_owner, self.attempt)

    @property
    def plait_status(self) -> str:
        """The status with Plait's own detail: ``dead_lettered`` for a dead-lettered run."""
        return "dead_lettered" if self.dead_letter is not None else self.status

    def shown_state(self, now: datetime | None = None) -> tuple[RunState, dict[str, Any] | None]:
        """The state as of ``now``: a run whose worker's lease expired is ``retrying``
        (it waits for another worker to take it over), though nothing wrote that yet."""
        expired = (
            self.status == "running"
            and self.lease_owner is not None
            and self.lease_expires_at is not None
            and self.lease_expires_at < (now or datetime.now(UTC))
        )
        if expired and self.state in ("running", "retrying"):
            retry = {"reason": "worker_lost", "attempt": self.attempt + 1}
            return "retrying", {**losses_only(self.state_detail), "retry": retry}
        return self.state, self.state_detail

    def to_api(self) -> dict[str, Any]:
        """The Agent Server ``Run`` shape (JSON-ready), plus Plait's fields.

        ``status`` is the Agent Server's, all the SDKs know (a dead-lettered run
        is ``error``, a run parked on an approval ``success``); ``plait_state``,
        its ``plait_state_detail`` and ``plait_state_label`` say what happened
        (:mod:`plait.engine.run.states`); ``plait_status`` and ``dead_letter`` as before;
        ``plait_priority`` and ``plait_expires_at`` its place and deadline in the queue;
        ``plait_graph`` and ``plait_version`` the graph version it runs.
        """
        state, detail = self.shown_state()
        return {
            "run_id": self.run_id,
            "thread_id": client_thread_id(self.tenant, self.thread_id),
            "assistant_id": self.assistant_id,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "status": self.status,
            "metadata": self.metadata,
            "multitask_strategy": self.multitask_strategy,
            "kwargs": self.kwargs,
            "cancel_reason": self.cancel_action,
            "plait_status": self.plait_status,
            "plait_state": state,
            "plait_state_detail": detail,
            "plait_state_label": state_label(state, detail),
            "dead_letter": self.dead_letter,
            "plait_priority": self.priority,
            "plait_expires_at": self.expires_at.isoformat() if self.expires_at else None,
            "plait_graph": self.graph,
            "plait_version": self.version,
        }


class ThreadBusy(Exception):
    """The thread has an active run and the strategy is ``reject`` (HTTP 409)."""

    def __init__(self, thread_id: str, active: list[str], tenant: str = DEFAULT_TENANT) -> None:
        self.thread_id, self.active = thread_id, active
        super().__init__(
            f"thread {client_thread_id(tenant, thread_id)} is busy with run {', '.join(active)}; "
            "use multitask_strategy 'enqueue', 'interrupt' or 'rollback', or wait for it to finish"
        )


class IdempotencyMismatch(Exception):
    """The Idempotency-Key was used before with another request body (HTTP 422)."""

    def __init__(self, key: str, run_id: str) -> None:
        self.key, self.run_id = key, run_id
        super().__init__(
            f"Idempotency-Key {key!r} was already used for another request (run {run_id}); "
            "use a new key for a new request"
        )


class RunNotFound(LookupError):
    """No such run (on that thread) (HTTP 404)."""

    def __init__(
        self, run_id: str, thread_id: str | None = None, tenant: str | None = None
    ) -> None:
        shown = client_thread_id(tenant or DEFAULT_TENANT, thread_id) if thread_id else None
        where = f" on thread {shown}" if shown else ""
        super().__init__(f"run {run_id} not found{where}")


class RunNotDeadLettered(Exception):
    """A requeue of a run that is not dead-lettered (HTTP 409)."""

    def __init__(self, run: Run) -> None:
        super().__init__(
            f"run {run.run_id} is {run.status}, not dead-lettered; only a dead-lettered run "
            "can be requeued (start a new run instead)"
        )


class RunActive(Exception):
    """The run is pending or running: cancel it before deleting it (HTTP 409)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id} is still active; cancel it first")


@dataclass(frozen=True)
class DirectClaim:
    """The creating process's own worker, with room for the run it creates.

    :func:`create_run` then creates the run already claimed by ``worker_id``
    (attempt 1, a lease of ``lease_seconds``) when a claim would have taken it
    first anyway: its thread is free, it may start now, no claimable run waits
    in the queue and its tenant has no cap on running runs. The caller hands
    such a run to that worker itself: it skips the queue's notification, the
    worker's claim transaction and the wait between them.
    """

    worker_id: str
    lease_seconds: float


def hash_request(payload: Any) -> str:
    """A stable hash of a request body (key order does not matter)."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def resume_kwargs(
    interrupt_id: str, answer: Any, parked: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The kwargs of a run that resumes ``interrupt_id`` with ``answer``.

    It streams what the parked run (``parked``: its kwargs) streamed, so a
    client following the thread (the editor) keeps getting the same events.
    """
    kwargs: dict[str, Any] = {"command": {"resume": {interrupt_id: answer}}}
    # The webhook too: whoever started the parked run hears how the thread goes on.
    for key in ("stream_mode", "stream_subgraphs", "durability", "webhook"):
        if parked is not None and key in parked:
            kwargs[key] = parked[key]
    return kwargs


@asynccontextmanager
async def thread_transaction(pool: Pool, thread_id: str) -> AsyncIterator[AsyncConnection[DictRow]]:
    """A transaction that holds ``thread_id``'s lock, taken first as every run-creating one does."""
    async with pool.connection() as conn, conn.transaction():
        await conn.execute(
            "SELECT 1 FROM plait_threads WHERE thread_id = %s FOR NO KEY UPDATE", (thread_id,)
        )
        yield conn


async def active_runs_in(conn: AsyncConnection[DictRow], thread_id: str) -> list[str]:
    """The ids of the thread's pending or running runs (take the thread's lock first)."""
    cursor = await conn.execute(
        f"SELECT run_id FROM plait_runs WHERE thread_id = %s AND {_ACTIVE} ORDER BY created_at",
        (thread_id,),
    )
    return [row["run_id"] for row in await cursor.fetchall()]


async def resume_thread_in(
    conn: AsyncConnection[DictRow],
    *,
    thread_id: str,
    graph: GraphVersion,
    parked_run_id: str,
    interrupt_id: str,
    answer: Any,
    metadata: Mapping[str, Any],
    origin: Mapping[str, Any],
    tenant: str,
) -> Run:
    """Create the run that answers ``interrupt_id`` of a parked thread (an approval, an MCP task).

    Call inside :func:`thread_transaction`. The run is enqueued behind any
    active run (several interrupts of one thread may be answered while a
    resume runs) and streams what the parked run streamed; ``origin`` (what
    answered) keys its request hash.
    """
    cursor = await conn.execute("SELECT kwargs FROM plait_runs WHERE run_id = %s", (parked_run_id,))
    parked = await cursor.fetchone()
    creation = await create_run_in(
        conn,
        thread_id=thread_id,
        graph=graph,
        kwargs=resume_kwargs(interrupt_id, answer, parked["kwargs"] if parked else None),
        metadata=metadata,
        multitask_strategy="enqueue",
        idempotency_key=None,
        request_hash=hash_request(origin),
        route="",
        if_not_exists="reject",
        tenant=tenant,
    )
    run, _ = await creation.read()
    return run


async def create_run(
    pool: Pool,
    *,
    thread_id: str,
    graph: GraphVersion,
    kwargs: Mapping[str, Any],
    metadata: Mapping[str, Any],
    multitask_strategy: str = "reject",
    idempotency_key: str | None = None,
    request_hash: str | None = None,
    route: str = "",
    if_not_exists: str = "reject",
    tenant: str = DEFAULT_TENANT,
    after_seconds: float | None = None,
    queueing: Queueing | None = None,
    direct: DirectClaim | None = None,
) -> tuple[Run, bool]:
    """Accept a run on ``thread_id`` as ``pending``; return it and whether it is new.

    With ``direct``, a new run may come back already claimed by that worker
    (``status == "running"``, :class:`DirectClaim`): the caller must start it there.

    With ``after_seconds`` no worker claims it before that many seconds have passed.
    ``queueing`` gives its priority and deadline (:class:`Queueing`; what it leaves
    out, the spec's ``queue`` says, else priority 5 and no deadline).

    In one transaction, under the thread's row lock: the thread is created
    when unknown and ``if_not_exists == "create"`` (else :class:`ThreadNotFound`),
    its graph is recorded on its first run (a thread only runs the digest it
    started with: :class:`ThreadSpecMismatch`), and ``multitask_strategy`` is
    applied to its active runs: ``reject`` raises :class:`ThreadBusy`;
    ``enqueue`` lets the new run wait its turn; ``interrupt`` / ``rollback``
    ask the running run to stop that way (pending ones stop at once) and the
    new run waits until it has. With ``idempotency_key``, a repeat of the same
    request on ``route`` returns the first run with ``created=False``, also
    when the duplicates arrive concurrently; another body raises
    :class:`IdempotencyMismatch`. Workers are woken with NOTIFY on commit.
    The run belongs to ``tenant``; another tenant's thread is :class:`ThreadNotFound`.
    """
    if multitask_strategy not in MULTITASK_STRATEGIES:
        raise ValueError(
            f"unknown multitask_strategy {multitask_strategy!r}; "
            f"use one of {', '.join(MULTITASK_STRATEGIES)}"
        )
    digest = request_hash or _request_hash(thread_id, graph, kwargs, metadata, multitask_strategy)
    # Pipeline mode: statements whose results are not needed yet share a round trip.
    async with pool.connection() as conn:
        async with pipelined_transaction(conn):
            creation = await create_run_in(
                conn,
                thread_id=thread_id,
                graph=graph,
                kwargs=kwargs,
                metadata=metadata,
                multitask_strategy=cast(MultitaskStrategy, multitask_strategy),
                idempotency_key=idempotency_key,
                request_hash=digest,
                route=route,
                if_not_exists=cast(IfNotExists, if_not_exists),
                tenant=tenant,
                after_seconds=after_seconds,
                queueing=queueing,
                direct=direct,
            )
        # The new run's row is read after the commit: it came back in the commit's round trip.
        return await creation.read()


def _request_hash(
    thread_id: str,
    graph: GraphVersion,
    kwargs: Mapping[str, Any],
    metadata: Mapping[str, Any],
    multitask_strategy: str,
) -> str:
    """The request hash of a run whose caller gave none (no client body to hash)."""
    return hash_request(
        {
            "thread_id": thread_id,
            "assistant": graph.ref,
            "kwargs": kwargs,
            "metadata": metadata,
            "multitask_strategy": multitask_strategy,
        }
    )


@asynccontextmanager
async def creating_run(
    pool: Pool,
    *,
    thread_id: str,
    idempotency_key: str | None = None,
    request_hash: str | None = None,
    route: str = "",
    if_not_exists: str = "reject",
    tenant: str = DEFAULT_TENANT,
    direct: DirectClaim | None = None,
) -> AsyncIterator[RunCreation]:
    """A :class:`RunCreation` in a transaction of its own, committed when the block ends.

    :func:`create_run` in two phases, for a caller with something to do between
    them: the API resolves the run's graph version while :meth:`RunCreation.lock`
    runs, one round trip of latency for both. Read the outcome with
    :meth:`RunCreation.created` after the block. The connection is in pipeline
    mode: statements whose results are not needed yet share a round trip, and the
    new run's row comes back in the commit's.
    """
    async with pool.connection() as conn:
        creation = RunCreation(
            conn,
            thread_id=thread_id,
            idempotency_key=idempotency_key,
            request_hash=request_hash,
            route=route,
            if_not_exists=cast(IfNotExists, if_not_exists),
            tenant=tenant,
            direct=direct,
        )
        async with pipelined_transaction(conn):
            yield creation
        await creation.read()


async def create_run_in(
    conn: AsyncConnection[DictRow],
    *,
    thread_id: str,
    graph: GraphVersion,
    kwargs: Mapping[str, Any],
    metadata: Mapping[str, Any],
    multitask_strategy: MultitaskStrategy,
    idempotency_key: str | None,
    request_hash: str,
    route: str,
    if_not_exists: IfNotExists,
    tenant: str = DEFAULT_TENANT,
    after_seconds: float | None = None,
    queueing: Queueing | None = None,
    direct: DirectClaim | None = None,
) -> RunCreation:
    """:func:`create_run`'s statements, sent inside the caller's transaction (approvals and
    crons use it). Read the run with :meth:`RunCreation.read` after the caller's commit
    when it can (:func:`create_run` does): in pipeline mode the new row then comes back
    in the commit's round trip."""
    creation = RunCreation(
        conn,
        thread_id=thread_id,
        idempotency_key=idempotency_key,
        request_hash=request_hash,
        route=route,
        if_not_exists=if_not_exists,
        tenant=tenant,
        direct=direct,
    )
    await creation.lock()
    if creation.replay is not None:
        return creation
    await creation.insert(
        graph=graph,
        kwargs=kwargs,
        metadata=metadata,
        multitask_strategy=multitask_strategy,
        after_seconds=after_seconds,
        queueing=queueing,
    )
    return creation


class RunCreation:
    """One run's creation inside a transaction on ``conn``, in two phases.

    :meth:`lock` needs nothing of the run's graph: it claims the idempotency key
    (a repeated request ends there, :attr:`replay`), creates the thread when
    ``if_not_exists == "create"``, locks the thread's row and reads its active
    runs. The row it returns is what a caller needs to choose the run's version
    (a thread keeps the version it started on), so the API resolves the assistant
    and the rollout while it runs. :meth:`insert` then does the rest, as
    :func:`create_run` describes.
    """

    def __init__(
        self,
        conn: AsyncConnection[DictRow],
        *,
        thread_id: str,
        idempotency_key: str | None,
        request_hash: str | None,
        route: str,
        if_not_exists: IfNotExists,
        tenant: str,
        direct: DirectClaim | None,
    ) -> None:
        self._conn = conn
        self.thread_id = thread_id
        self.run_id = str(uuid.uuid4())
        self._key = idempotency_key
        self._hash = request_hash
        self._route = route
        self._if_not_exists = if_not_exists
        self._tenant = tenant
        self._direct = direct
        #: The first run of a repeated request (same key, same request), once locked.
        self.replay: Run | None = None
        # What lock() read under the thread's lock: its row and its active runs.
        self._thread: dict[str, Any] | None = None
        self._active: list[dict[str, Any]] = []
        self._sent: AsyncCursor[DictRow] | None = None
        self._created: tuple[Run, bool] | None = None

    async def lock(self) -> dict[str, Any] | None:
        """Phase one: the thread's row, locked; ``None`` for a repeated request (:attr:`replay`).

        Raises :class:`ThreadNotFound`, or :class:`IdempotencyMismatch` for a key
        used before with another request.
        """
        conn = self._conn
        if self._key is not None:
            if self._hash is None:
                raise ValueError("a run created with an idempotency key needs its request's hash")
            # Claimed before anything else: a concurrent duplicate blocks on this
            # unique key until the first transaction ends, then sees its run.
            cursor = await conn.execute(
                """
                INSERT INTO plait_idempotency_keys (key, route, request_hash, run_id, tenant_id)
                VALUES (%s, %s, %s, %s, %s)
                ON CONFLICT (tenant_id, key, route) DO NOTHING
                RETURNING run_id
                """,
                (self._key, self._route, self._hash, self.run_id, self._tenant),
            )
            if await cursor.fetchone() is None:
                self.replay = await _replay(conn, self._key, self._route, self._hash, self._tenant)
                return None
        # Both queries are sent before either result is read: in pipeline mode
        # (creating_run's) they cost one round trip. The server still runs them in
        # order: the runs are read under the lock.
        locked = await _lock_thread(conn, self.thread_id, self._if_not_exists, self._tenant)
        cursor = await conn.execute(
            f"SELECT run_id, status FROM plait_runs WHERE thread_id = %s AND {_ACTIVE} "
            "ORDER BY queue_id FOR UPDATE",
            (self.thread_id,),
        )
        thread = await locked.fetchone()
        if thread is None:
            raise ThreadNotFound(self.thread_id, self._tenant)
        self._thread, self._active = thread, await cursor.fetchall()
        return thread

    async def insert(
        self,
        *,
        graph: GraphVersion,
        kwargs: Mapping[str, Any],
        metadata: Mapping[str, Any],
        multitask_strategy: MultitaskStrategy,
        after_seconds: float | None = None,
        queueing: Queueing | None = None,
    ) -> None:
        """Phase two: check the thread against ``graph``, apply ``multitask_strategy`` to its
        active runs and send the run's insert (its row is read after the commit).

        Nothing is inserted for a repeated request: :meth:`created` answers its first run.
        """
        if self.replay is not None:
            return
        thread, active = self._thread, self._active
        if thread is None:
            raise RuntimeError("RunCreation.insert before RunCreation.lock")
        conn, thread_id = self._conn, self.thread_id
        first_run = _first_run(thread, graph)
        if thread["status"] == "interrupted":
            await settle_waiting_in(conn, thread_id)
        if active and multitask_strategy == "reject":
            raise ThreadBusy(thread_id, [row["run_id"] for row in active], self._tenant)
        if multitask_strategy in ("interrupt", "rollback"):
            for row in active:
                await _cancel_locked(conn, row["run_id"], row["status"], multitask_strategy)

        # Also journals the metadata event under seq 1 (notified in the journal's
        # payload format: a stream starts before any worker claims the run, with no
        # query), marks the thread busy (recording its graph on its first run) and
        # wakes the workers, all in one statement.
        queued = (queueing or Queueing()).with_defaults(graph.loaded.spec.spec.queue)
        # Claimed here only when its thread is free and it may start now (the
        # statement checks the queue and the tenant's cap).
        direct = self._direct
        claim = direct if direct is not None and not active and not after_seconds else None
        first = first_event(self.run_id)
        metadata_event = journal.encode_batch([(first.event, first.data)])
        request_hash = self._hash or _request_hash(
            thread_id, graph, kwargs, metadata, multitask_strategy
        )
        self._sent = await conn.execute(
            _INSERT_RUN,
            {
                "run_id": self.run_id,
                "thread_id": thread_id,
                "assistant_id": graph.assistant_id,
                "graph": graph.name,
                "version": graph.version,
                "digest": graph.digest,
                "kwargs": Json(dict(kwargs)),
                "metadata": Jsonb({**metadata, **draft_marks(graph)}),
                "strategy": multitask_strategy,
                "key": self._key,
                "hash": request_hash,
                "event": metadata_event.decode(),
                "first_run": first_run,
                "tenant": self._tenant,
                "max_attempts": graph.loaded.spec.spec.max_attempts,
                "after": after_seconds,
                "priority": queued.priority,
                "expires_at": queued.expires_at,
                "expires_in": queued.expires_in,
                "direct_worker": claim.worker_id if claim is not None else None,
                "lease": claim.lease_seconds if claim is not None else None,
                "claimed_state": _CLAIMED,
                "events": journal.EVENTS_CHANNEL,
                "thread_hint": journal.thread_hint(thread_id),
                "runs": RUNS_CHANNEL,
            },
        )
        await settle_answered_in(conn, thread_id, self.run_id, kwargs)
        await timers.settle_answered_in(conn, thread_id, kwargs)

    async def read(self) -> tuple[Run, bool]:
        """Read what was sent (:func:`creating_run` does, after the commit): the run and
        whether it is new (``False``: the first run of a repeated request)."""
        if self.replay is not None:
            self._created = (self.replay, False)
        elif self._sent is not None:
            self._created = (_run(await self._sent.fetchone()), True)
        return self.created()

    def created(self) -> tuple[Run, bool]:
        """The run and whether it is new (``False``: the first run of a repeated request)."""
        if self._created is None:
            raise RuntimeError("no run was created: RunCreation.insert was not called")
        return self._created


def draft_marks(graph: GraphVersion) -> dict[str, Any]:
    """Metadata saying a run ran a draft (unsaved text) and which: ``{}`` for a published
    version. The ``plait_`` prefix is the server's: a client cannot forge it."""
    if not graph.draft:
        return {}
    return {"plait_draft": {"digest": graph.digest, "version": graph.loaded.version}}


def first_event(run_id: str) -> journal.JournalEvent:
    """The event :func:`create_run` journals with every run (seq 1): its ``metadata``.

    A stream of a run just created can send it without reading the journal.
    """
    return journal.JournalEvent(run_id, 1, "metadata", {"run_id": run_id, "attempt": 1})


async def get_run(
    pool: Pool, run_id: str, thread_id: str | None = None, *, tenant: str | None = None
) -> Run | None:
    """The run, or ``None`` (also when it is on another thread than ``thread_id``, or
    another tenant's than ``tenant``; ``None`` there means any tenant)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_runs WHERE run_id = %(run_id)s "
            f"AND (%(thread_id)s::text IS NULL OR thread_id = %(thread_id)s) AND {OF_TENANT}",
            {"run_id": run_id, "thread_id": thread_id, "tenant": tenant},
        )
        row = await cursor.fetchone()
    return None if row is None else _run(row)


@dataclass(frozen=True)
class QueueCounts:
    """The queue as of now: runs by status and by Plait's state, the oldest pending run's age,
    dead letters, pending runs by priority."""

    by_status: dict[str, int]
    oldest_pending_seconds: float
    dead_lettered: int
    by_state: dict[str, int] = field(default_factory=dict)
    pending_by_priority: dict[int, int] = field(default_factory=dict)


async def queue_counts(conn: AsyncConnection[DictRow]) -> QueueCounts:
    """Count the queue's runs in one statement (for ``/metrics``; every tenant)."""
    cursor = await conn.execute(
        """
        SELECT
          (SELECT coalesce(jsonb_object_agg(status, n), '{}'::jsonb)
             FROM (SELECT status, count(*) AS n FROM plait_runs GROUP BY status) s) AS runs,
          -- As Run.shown_state shows it: a run whose worker's lease expired is retrying.
          (SELECT coalesce(jsonb_object_agg(state, n), '{}'::jsonb)
             FROM (SELECT CASE WHEN status = 'running' AND lease_owner IS NOT NULL
                                    AND lease_expires_at < now()
                                    AND state IN ('running', 'retrying')
                               THEN 'retrying' ELSE state END AS state, count(*) AS n
                   FROM plait_runs GROUP BY 1) s) AS states,
          (SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)
             FROM plait_runs WHERE status = 'pending') AS oldest_pending,
          (SELECT count(*) FROM plait_runs WHERE dead_letter IS NOT NULL) AS dead_lettered,
          (SELECT coalesce(jsonb_object_agg(priority, n), '{}'::jsonb)
             FROM (SELECT priority, count(*) AS n FROM plait_runs
                   WHERE status = 'pending' GROUP BY priority) s) AS priorities
        """
    )
    row = await cursor.fetchone()
    assert row is not None  # aggregates always return a row
    return QueueCounts(
        by_status={str(k): int(v) for k, v in (row["runs"] or {}).items()},
        oldest_pending_seconds=float(row["oldest_pending"] or 0),
        dead_lettered=int(row["dead_lettered"]),
        by_state={str(k): int(v) for k, v in (row["states"] or {}).items()},
        pending_by_priority={int(k): int(v) for k, v in (row["priorities"] or {}).items()},
    )


async def list_runs(
    pool: Pool,
    thread_id: str,
    *,
    limit: int = 10,
    offset: int = 0,
    status: str | None = None,
    tenant: str | None = None,
) -> list[Run]:
    """The thread's runs, newest first (as the Agent Server lists them)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_runs WHERE thread_id = %(thread_id)s "
            f"AND (%(status)s::text IS NULL OR status = %(status)s) AND {OF_TENANT} "
            "ORDER BY queue_id DESC LIMIT %(limit)s OFFSET %(offset)s",
            {
                "thread_id": thread_id,
                "status": status,
                "tenant": tenant,
                "limit": limit,
                "offset": offset,
            },
        )
        rows = await cursor.fetchall()
    return [_run(row) for row in rows]


async def ended_runs_of_graph(
    pool: Pool,
    graph: str,
    *,
    tenant: str | None,
    version: str | None = None,
    since: datetime | None = None,
    page_size: int = 100,
) -> AsyncIterator[list[Run]]:
    """The ended runs of ``graph`` (of ``version``, created at or after ``since``), oldest
    first, a page at a time: each page is read when the one before it was used, by keyset
    (``created_at, run_id``), so an export of many runs holds one page in memory."""
    after: tuple[datetime, str] | None = None
    while True:
        async with pool.connection() as conn:
            cursor = await conn.execute(
                f"""
                SELECT {_COLUMNS} FROM plait_runs
                WHERE graph = %(graph)s AND {OF_TENANT} AND ended_at IS NOT NULL
                  AND (%(version)s::text IS NULL OR version = %(version)s)
                  AND (%(since)s::timestamptz IS NULL OR created_at >= %(since)s)
                  AND (%(after_at)s::timestamptz IS NULL
                       OR (created_at, run_id) > (%(after_at)s, %(after_id)s))
                ORDER BY created_at, run_id
                LIMIT %(limit)s
                """,
                {
                    "graph": graph,
                    "tenant": tenant,
                    "version": version,
                    "since": since,
                    "after_at": after[0] if after else None,
                    "after_id": after[1] if after else None,
                    "limit": page_size,
                },
            )
            rows = await cursor.fetchall()
        if not rows:
            return
        page = [_run(row) for row in rows]
        yield page
        if len(page) < page_size:
            return
        after = (page[-1].created_at, page[-1].run_id)


async def cancel_run(
    pool: Pool,
    thread_id: str,
    run_id: str,
    action: str = "interrupt",
    *,
    tenant: str | None = None,
) -> Run:
    """Cancel a run: a pending one stops at once, a running one when its worker sees it.

    ``interrupt`` keeps what the run did; ``rollback`` also deletes the run
    (and, done by the worker for a running run, its checkpoints). A pending
    run cancelled with ``interrupt`` ends ``interrupted`` with an ``end``
    event; with ``rollback`` it is deleted. A finished run is returned as is.
    Raises :class:`RunNotFound`.
    """
    if action not in ("interrupt", "rollback"):
        raise ValueError(f"unknown cancel action {action!r}; use 'interrupt' or 'rollback'")
    async with thread_transaction(pool, thread_id) as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_runs WHERE run_id = %(run_id)s "
            f"AND thread_id = %(thread_id)s AND {OF_TENANT} FOR UPDATE",
            {"run_id": run_id, "thread_id": thread_id, "tenant": tenant},
        )
        row = await cursor.fetchone()
        if row is None:
            raise RunNotFound(run_id, thread_id, tenant)
        run = _run(row)
        if run.state == "waiting_for_timer":
            return await _cancel_timer_wait(conn, run_id, cast(CancelAction, action))
        if run.status in TERMINAL or (run.status == "running" and run.lease_owner is None):
            return run
        updated = await _cancel_locked(conn, run_id, run.status, cast(CancelAction, action))
        await _refresh_thread(conn, thread_id, None)
        return updated or run


async def delete_run(pool: Pool, thread_id: str, run_id: str, *, tenant: str | None = None) -> None:
    """Delete a finished run and its journal; raises :class:`RunNotFound` / :class:`RunActive`."""
    async with pool.connection() as conn, conn.transaction():
        cursor = await conn.execute(
            "SELECT status, lease_owner FROM plait_runs WHERE run_id = %(run_id)s "
            f"AND thread_id = %(thread_id)s AND {OF_TENANT} FOR UPDATE",
            {"run_id": run_id, "thread_id": thread_id, "tenant": tenant},
        )
        row = await cursor.fetchone()
        if row is None:
            raise RunNotFound(run_id, thread_id, tenant)
        if row["status"] == "pending" or (row["status"] == "running" and row["lease_owner"]):
            raise RunActive(run_id)
        await conn.execute("DELETE FROM plait_runs WHERE run_id = %s", (run_id,))


# --------------------------------------------------------------------------- claims


# The claim's statement (claim_runs says what it does).
_CLAIM = f"""
WITH RECURSIVE waiting_tenants AS (
    -- The tenants with pending runs, an index probe each (a loose index
    -- scan): DISTINCT would read every pending run.
    (SELECT tenant_id FROM plait_runs WHERE status = 'pending'
     ORDER BY tenant_id LIMIT 1)
    UNION ALL
    SELECT (SELECT r.tenant_id FROM plait_runs r
            WHERE r.status = 'pending' AND r.tenant_id > w.tenant_id
            ORDER BY r.tenant_id LIMIT 1)
    FROM waiting_tenants w WHERE w.tenant_id IS NOT NULL
), claimable AS (
    -- Of each tenant's runs of each priority, the first `limit` that could
    -- start, longest waiting first (plait_runs_claim_order): within one
    -- priority that is their effective-priority order, so a claim reads a
    -- few rows per priority however long the queue is.
    SELECT c.run_id, c.tenant_id, c.queue_id, c.since,
           -- Aging: a level more per `aging` seconds waited since it could start.
           c.priority + floor(extract(epoch FROM now() - c.since) / %(aging)s)
               AS effective
    FROM waiting_tenants w
    CROSS JOIN generate_series({LOWEST_PRIORITY}, {HIGHEST_PRIORITY}) AS level(priority)
    CROSS JOIN LATERAL (
        SELECT r.run_id, r.tenant_id, r.queue_id, r.priority,
               coalesce(r.not_before, r.created_at) AS since
        FROM plait_runs r
        WHERE r.status = 'pending'
          AND r.tenant_id = w.tenant_id AND r.priority = level.priority
          -- `after_seconds`: not before its time. It still holds its
          -- place in the thread's queue (runs queued after it wait).
          AND (r.not_before IS NULL OR r.not_before <= now())
          -- Past its deadline before it ever started: never run (the sweep
          -- ends it). A run handed back or requeued started: it goes on.
          AND (r.expires_at IS NULL OR r.expires_at > now() OR r.attempt > 0)
          AND NOT EXISTS (
              SELECT 1 FROM plait_runs o
              WHERE o.thread_id = r.thread_id
                AND ((o.status = 'running' AND o.lease_owner IS NOT NULL)
                     OR (o.status = 'pending' AND o.queue_id < r.queue_id
                         AND (o.expires_at IS NULL OR o.expires_at > now()
                              OR o.attempt > 0)))
          )
        ORDER BY coalesce(r.not_before, r.created_at), r.queue_id
        LIMIT %(limit)s
    ) c
    WHERE w.tenant_id IS NOT NULL
    UNION ALL
    -- Runs whose worker's lease expired (rare: plait_runs_running).
    SELECT r.run_id, r.tenant_id, r.queue_id, coalesce(r.not_before, r.created_at),
           r.priority + floor(extract(epoch FROM now()
               - coalesce(r.not_before, r.created_at)) / %(aging)s)
    FROM plait_runs r
    WHERE r.status = 'running' AND r.lease_owner IS NOT NULL
      AND r.lease_expires_at < now()
      AND r.run_id <> ALL(%(executing)s::text[])
), running AS (
    -- Live leases only: an expired one is claimable again, in its tenant's turn.
    SELECT tenant_id, count(*) AS n FROM plait_runs
    WHERE status = 'running' AND lease_owner IS NOT NULL
      AND lease_expires_at >= now()
    GROUP BY tenant_id
), ranked AS (
    SELECT c.run_id, c.queue_id,
           row_number() OVER (
               PARTITION BY c.tenant_id ORDER BY c.effective DESC, c.since, c.queue_id
           ) AS turn,
           COALESCE(running.n, 0) AS busy,
           t.max_running_runs - COALESCE(running.n, 0) AS room
    FROM claimable c
    LEFT JOIN plait_tenants t ON t.tenant_id = c.tenant_id
    LEFT JOIN running ON running.tenant_id = c.tenant_id
), eligible AS (
    SELECT run_id, busy + turn AS place, queue_id FROM ranked
    WHERE room IS NULL OR turn <= room
), picked AS (
    SELECT r.run_id FROM plait_runs r JOIN eligible e ON e.run_id = r.run_id
    -- Found by their keys: a join alone may read the whole table.
    WHERE r.run_id = ANY(ARRAY(SELECT run_id FROM eligible))
    -- The tenant running fewest runs first; then queue order.
    ORDER BY e.place, e.queue_id
    LIMIT %(limit)s
    FOR UPDATE OF r SKIP LOCKED
)
UPDATE plait_runs r
SET status = 'running',
    -- Taken over from a lost worker: `retrying` until the new attempt starts.
    state = CASE WHEN r.status = 'running' THEN %(taken_over)s ELSE %(claimed)s END,
    state_detail = CASE WHEN r.status = 'running'
        THEN coalesce(r.state_detail - 'retry' - 'waiting', '{{}}'::jsonb)
             || jsonb_build_object('retry', jsonb_build_object(
                    'reason', 'worker_lost', 'attempt', r.attempt + 1))
        ELSE r.state_detail END,
    attempt = r.attempt + 1,
    -- Taken from a worker whose lease expired: that attempt was lost.
    lost_attempts = r.lost_attempts + (r.status = 'running')::int,
    lease_owner = %(worker)s,
    lease_expires_at = now() + make_interval(secs => %(lease)s),
    started_at = CASE WHEN r.attempt = 0 THEN now() ELSE r.started_at END,
    updated_at = now()
FROM picked
WHERE r.run_id = picked.run_id
RETURNING {_R_COLUMNS},
    -- Read here so the worker needs no query for its quota (server/auth/quota.py).
    COALESCE((
        SELECT jsonb_build_object({_LIMITS_JSON})
        FROM plait_tenants t WHERE t.tenant_id = r.tenant_id
    ), '{{}}'::jsonb) AS tenant_limits
"""


async def claim_runs(
    pool: Pool,
    worker_id: str,
    limit: int,
    lease_seconds: float,
    *,
    executing: Sequence[str] = (),
    aging_seconds: float = DEFAULT_AGING_SECONDS,
) -> list[Run]:
    """Take up to ``limit`` runs for ``worker_id`` under a lease of ``lease_seconds``.

    Claimable: the oldest pending run of a thread with no running run, or a
    running run whose lease expired (its worker died; claimed with
    ``attempt + 1`` like any claim, and counted in ``lost_attempts`` until
    the run finishes a step: :func:`note_progress`). Runs
    in ``executing`` (the worker's own, still running) are not taken: a
    worker that was cut off past its lease goes on with them, or learns it
    lost them. Concurrent claimers skip each other's rows (``SKIP
    LOCKED``), so no run is handed to two workers; a run whose row a fenced
    write holds (:mod:`plait.server.queue.leases`) is skipped until it commits.

    Tenants take turns: each tenant's claimable runs are ranked by effective
    priority (its ``priority`` plus a level per ``aging_seconds`` it waited:
    :mod:`plait.server.queue.queueing`), then time waited, then queue order (a claim
    reads the first ``limit`` of each tenant's priorities, in that order, from an
    index: its cost does not grow with the queue), and a run's place is
    its rank plus the runs its tenant already runs; places are claimed in order
    (ties by queue order, never by priority: a tenant's priorities order its
    own runs, not its share). So the tenant running fewest runs gets the next
    free slot, and a tenant with a long backlog does not starve one that queued
    later. Priority orders runs across threads only: a thread's runs still go
    one at a time in queue order. A pending run past its ``expires_at`` is never
    claimed, nor holds back the runs queued after it on its thread (the
    workers' sweep ends it: :func:`expire_runs`). A tenant's ``max_running_runs`` caps its runs
    running across all workers; claims are serialised by an advisory lock so
    two workers cannot both fill the same free room.
    """
    if limit <= 0:
        return []
    # Pipelined: the lock, the claim and the commit cost one round trip. A claimer
    # cut off before its commit must not keep the claim lock: its session ends once
    # silent for a lease (server/queue/leases.py).
    async with pool.connection() as conn:
        async with pipelined_transaction(conn):
            await conn.execute("SELECT plait_hold_session(%s)", (int(lease_seconds * 1000),))
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_CLAIM_LOCK,))
            cursor = await conn.execute(
                _CLAIM,
                {
                    "limit": limit,
                    "worker": worker_id,
                    "lease": lease_seconds,
                    "executing": list(executing),
                    "taken_over": _TAKEN_OVER,
                    "claimed": _CLAIMED,
                    "aging": aging_seconds,
                },
            )
        # Read once committed: the rows came back in the commit's round trip.
        rows = await cursor.fetchall()
    return sorted((_run(row) for row in rows), key=lambda run: run.queue_id)


async def heartbeat(
    pool: Pool, worker_id: str, attempts: Mapping[str, int], lease_seconds: float
) -> set[str]:
    """Extend the leases ``worker_id`` still holds; return the runs it must stop.

    ``attempts`` gives each run's attempt the worker executes (its lease,
    :mod:`plait.server.queue.leases`). Returned: runs with a cancel requested (read
    ``cancel_action`` with :func:`get_run`) and runs the worker no longer owns
    for that attempt (its lease expired and another claim took the run, or
    the run ended or was deleted). An expired lease nobody took over is
    renewed: nothing else wrote for the run meanwhile.
    """
    if not attempts:
        return set()
    run_ids = list(attempts)
    async with pool.connection() as conn:
        # Rows locked in run_id order, as the journal's appends lock them: the
        # same rows locked in two orders deadlock, and a failed heartbeat can
        # cost the leases of every run of the worker.
        cursor = await conn.execute(
            """
            WITH locked AS (
                SELECT r.run_id FROM plait_runs r
                JOIN unnest(%(ids)s::text[], %(attempts)s::int[]) AS held(run_id, attempt)
                  ON held.run_id = r.run_id AND held.attempt = r.attempt
                WHERE r.lease_owner = %(worker)s AND r.status = 'running'
                ORDER BY r.run_id
                FOR NO KEY UPDATE OF r
            )
            UPDATE plait_runs r
            SET lease_expires_at = now() + make_interval(secs => %(lease)s)
            FROM locked
            WHERE r.run_id = locked.run_id
            RETURNING r.run_id, r.cancel_action
            """,
            {
                "lease": lease_seconds,
                "ids": run_ids,
                "attempts": [attempts[run_id] for run_id in run_ids],
                "worker": worker_id,
            },
        )
        rows = await cursor.fetchall()
    owned = {row["run_id"] for row in rows}
    cancelled = {row["run_id"] for row in rows if row["cancel_action"] is not None}
    return cancelled | (set(run_ids) - owned)


async def set_state(
    pool: Pool, lease: Lease, state: RunState, detail: Mapping[str, Any] | None
) -> bool:
    """While ``lease`` holds the run: record that it runs or retries (``state``, ``detail``).

    Staying in its state with a new detail (items lost meanwhile) is no transition.
    Returns whether it did (not: the lease moved on, or the run ended).
    """
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "UPDATE plait_runs SET state = %s, state_detail = %s "
            "WHERE run_id = %s AND lease_owner = %s AND attempt = %s AND status = 'running' "
            "AND state = ANY(%s)",
            (
                state,
                Jsonb(dict(detail)) if detail is not None else None,
                lease.run_id,
                lease.owner,
                lease.attempt,
                [state, *sources_of(state)],
            ),
        )
        return cursor.rowcount > 0


async def finish_run(
    pool: Pool,
    run_id: str,
    worker_id: str,
    state: RunState,
    error: str | None = None,
    *,
    detail: Mapping[str, Any] | None = None,
    attempt: int | None = None,
    dead_letter: Mapping[str, Any] | None = None,
    values: Any = None,
    graders: Sequence[str] = (),
    events: Sequence[tuple[str, Any]] = (),
    webhook: bool = True,
    before: tuple[str, Sequence[Any]] | None = None,
    listener: journal.JournalListener | None = None,
) -> bool:
    """Record how a run ended and journal its ``end``, only if ``worker_id`` holds its lease
    (for ``attempt``, when given: the executor always gives it).

    ``events`` are the run's last events not journaled yet
    (:meth:`~plait.server.queue.journal_writer.JournalWriter.drain`): they are
    journaled before the ``end``, by the same statement.

    Returns whether it did. ``state`` is Plait's (with its ``detail``); the
    Agent Server status stored beside it is the one the state maps to
    (:mod:`plait.engine.run.states`), and a state the run may not go to from
    where it is raises :class:`~plait.engine.run.states.ForbiddenTransition`.
    ``dead_letter`` (state ``dead_lettered``) says why the run was
    dead-lettered (:func:`dead_letter_of`). A run waiting on a person or a tool
    stopped on ``interrupt()`` (status ``success``): its thread becomes ``interrupted``.
    Otherwise the thread becomes ``idle`` (success, cancelled) or ``error``
    (error, timeout), unless more runs wait on it (then it stays ``busy``, and
    workers are woken for the next one). The status and the ``end`` event commit
    together: a client told the run ended never finds it still running, and a
    worker that lost its lease writes neither. A run with a ``webhook`` owes it a
    call with the run and its final ``values``, written in the same transaction
    (:mod:`plait.server.queue.webhooks`); so is a score owed by each of ``graders``
    (a sampled run of a spec with ``evaluation``: :mod:`plait.server.queue.scores`).
    ``webhook=False`` says the run has none (its ``kwargs``, which never change): with
    no ``graders`` either, nothing in the transaction waits for the run's row, and
    the end commits in one round trip instead of two. ``before`` is a statement to run
    first in the same transaction (with binary parameters): the checkpoint of the run's
    last step, behind the lease's fence (a refusal raises the fence's error).
    ``listener`` is this process's: the last events and the ``end`` are handed to its
    subscribers once committed, before their notification comes back
    (:meth:`~plait.server.queue.journal.JournalListener.committed`).
    """
    status = status_of(check_ending(state))
    after: ThreadStatus = (
        "interrupted"
        if state in _WAITING
        else "error"
        if status in ("error", "timeout")
        else "idle"
    )
    # The last events and the `end`, as one journal batch (and one notification
    # when it fits in one).
    batch = journal.encode_batch([*events, (journal.END, None)]).decode()
    # What else the end owes (a webhook's delivery, scores) needs the run's row inside
    # the transaction; without it, the row is read once the commit has brought it back.
    owes_more = webhook or bool(graders)
    row: DictRow | None = None
    # The statements share round trips (pipeline): the thread's lock first (the lock
    # order), then, in a snapshot taken after it, everything else.
    async with pool.connection() as conn:
        async with pipelined_transaction(conn):
            await conn.execute(_LOCK_THREAD_OF_RUN, (run_id,))
            if before is not None:
                await conn.execute(before[0], before[1], binary=True)
            cursor = await conn.execute(
                _FINISH,
                {
                    "run_id": run_id,
                    "worker": worker_id,
                    "status": status,
                    "state": state,
                    "detail": Jsonb(dict(detail)) if detail is not None else None,
                    "sources": list(sources_of(state)),
                    "error": error,
                    "attempt": attempt,
                    "dead_letter": Jsonb(dict(dead_letter)) if dead_letter is not None else None,
                    "after": after,
                    "batch": batch,
                    "payload": batch if len(batch) + len(run_id) < journal.NOTIFY_LIMIT else None,
                    "events": journal.EVENTS_CHANNEL,
                    "runs": RUNS_CHANNEL,
                    "webhook": webhook,
                },
            )
            if owes_more:
                row = await cursor.fetchone()
                if row is not None:
                    await _owe_after_end(conn, run_id, row["webhook"], values, graders)
        if not owes_more:
            row = await cursor.fetchone()
        if row is None:
            async with conn.transaction():
                await _refuse_forbidden(conn, run_id, worker_id, attempt, state)
            return False
    if listener is not None:
        listener.committed(run_id, row["first_seq"], batch)
    return True


async def _owe_after_end(
    conn: AsyncConnection[DictRow],
    run_id: str,
    webhook: str | None,
    values: Any,
    graders: Sequence[str],
) -> None:
    """Owe the run's ``webhook`` its delivery and ``graders`` their scores (in the end's
    transaction)."""
    if webhook:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_runs WHERE run_id = %s", (run_id,)
        )
        await webhooks.enqueue(conn, _run(await cursor.fetchone()), values)
    await scores.enqueue(conn, run_id, graders)


async def _refuse_forbidden(
    conn: AsyncConnection[DictRow], run_id: str, worker_id: str, attempt: int | None, state: str
) -> None:
    """Raise ``ForbiddenTransition`` when a finish the lease allowed was refused for its state."""
    cursor = await conn.execute(
        "SELECT state FROM plait_runs WHERE run_id = %s AND lease_owner = %s "
        "AND status = 'running' AND (%s::int IS NULL OR attempt = %s)",
        (run_id, worker_id, attempt, attempt),
    )
    held = await cursor.fetchone()
    if held is not None:
        check_transition(held["state"], state)


_LOCK_THREAD_OF_RUN = """
SELECT 1 FROM plait_threads t JOIN plait_runs r USING (thread_id)
WHERE r.run_id = %s
FOR NO KEY UPDATE OF t
"""

# Only for the lease owner: the final status, the run's last events and its
# `end` (the batch) under its next seqs (notified in the journal's payload
# format, so subscribers need no query: see server/queue/journal.py), the
# thread's status (`busy` while another run waits on it, and then the workers
# are woken for that run).
_FINISH = """
WITH finished AS (
    UPDATE plait_runs
    SET status = %(status)s, error = %(error)s, ended_at = now(), updated_at = now(),
        lease_expires_at = NULL, dead_letter = %(dead_letter)s,
        event_seq = event_seq + json_array_length(%(batch)s::json),
        state = %(state)s, state_detail = %(detail)s
    WHERE run_id = %(run_id)s AND lease_owner = %(worker)s AND status = 'running'
      AND (%(attempt)s::int IS NULL OR attempt = %(attempt)s)
      AND state = ANY(%(sources)s)
    RETURNING thread_id, tenant_id,
              event_seq - json_array_length(%(batch)s::json) + 1 AS first_seq,
              -- Only asked when the run may have one: `json` is parsed to answer.
              CASE WHEN %(webhook)s THEN kwargs ->> 'webhook' END AS webhook
), ended AS (
    INSERT INTO plait_run_events (run_id, seq, event, data)
    SELECT %(run_id)s, finished.first_seq + item.position - 1, item.pair->>0, item.pair->1
    FROM finished,
         json_array_elements(%(batch)s::json) WITH ORDINALITY AS item(pair, position)
), waiting AS (
    SELECT o.run_id FROM plait_runs o JOIN finished USING (thread_id)
    WHERE o.run_id <> %(run_id)s
      AND (o.status = 'pending' OR (o.status = 'running' AND o.lease_owner IS NOT NULL))
    LIMIT 1
), capped AS (
    -- A capped tenant's pending runs may have been passed over for its cap: this end
    -- frees room, so workers are woken (they claim when notified, not on every end).
    SELECT p.run_id FROM plait_runs p
    JOIN finished USING (tenant_id)
    JOIN plait_tenants t ON t.tenant_id = p.tenant_id AND t.max_running_runs IS NOT NULL
    WHERE p.status = 'pending'
    LIMIT 1
), thread AS (
    UPDATE plait_threads t
    SET status = CASE WHEN EXISTS (SELECT FROM waiting) THEN 'busy' ELSE %(after)s END,
        updated_at = now()
    FROM finished
    WHERE t.thread_id = finished.thread_id
)
SELECT pg_notify(%(events)s, CASE WHEN %(payload)s::text IS NULL THEN %(run_id)s
                  ELSE %(run_id)s || ' ' || finished.first_seq || ' ' || %(payload)s END),
       (SELECT pg_notify(%(runs)s, waiting.run_id) FROM waiting),
       (SELECT pg_notify(%(runs)s, capped.run_id) FROM capped),
       finished.webhook, finished.first_seq
FROM finished
"""


# `claim`: claimed at once by the creating process's own worker (DirectClaim), only
# when a claim would take it first: no claimable run waits in the queue, and its
# tenant has no cap on running runs (caps are filled under the claim's advisory
# lock). Its thread is free: the caller checked, under its lock. Decided once
# (materialized): as a subquery each use of `claimed` below was planned with a copy
# of the checks, and PostgreSQL, seeing that plan dearer, planned the statement anew
# on every run instead of reusing a generic plan. These notes are not in the SQL:
# psycopg converts a statement longer than 4,096 characters afresh on every call
# (about 60 us for this one) instead of caching it.
_INSERT_RUN = f"""
WITH claim AS MATERIALIZED (
    SELECT %(direct_worker)s::text IS NOT NULL
      AND NOT EXISTS (
          SELECT 1 FROM plait_runs p
          WHERE p.status = 'pending'
            AND (p.not_before IS NULL OR p.not_before <= now())
            AND (p.expires_at IS NULL OR p.expires_at > now() OR p.attempt > 0))
      AND NOT EXISTS (
          SELECT 1 FROM plait_tenants t
          WHERE t.tenant_id = %(tenant)s AND t.max_running_runs IS NOT NULL) AS claimed
), inserted AS (
    INSERT INTO plait_runs (
        run_id, thread_id, assistant_id, graph, version, digest, status, kwargs,
        metadata, multitask_strategy, idempotency_key, request_hash,
        created_at, updated_at, event_seq, tenant_id, not_before, max_attempts,
        priority, expires_at, state, attempt, lease_owner, lease_expires_at, started_at
    )
    SELECT %(run_id)s, %(thread_id)s, %(assistant_id)s, %(graph)s, %(version)s, %(digest)s,
            CASE WHEN claimed THEN 'running' ELSE 'pending' END,
            %(kwargs)s, %(metadata)s, %(strategy)s, %(key)s, %(hash)s,
            clock_timestamp(), clock_timestamp(), 1, %(tenant)s,
            clock_timestamp() + make_interval(secs => %(after)s::float8), %(max_attempts)s,
            %(priority)s,
            -- `expires_in` counts from when the run may start (after `after_seconds`).
            coalesce(%(expires_at)s::timestamptz,
                     clock_timestamp() + make_interval(secs => coalesce(%(after)s::float8, 0))
                     + make_interval(secs => %(expires_in)s::float8)),
            CASE WHEN claimed THEN %(claimed_state)s ELSE 'queued' END,
            claimed::int,
            CASE WHEN claimed THEN %(direct_worker)s END,
            CASE WHEN claimed THEN now() + make_interval(secs => %(lease)s::float8) END,
            now()
    FROM claim
    RETURNING {_COLUMNS},
        -- A claimed run's worker needs its tenant's limits, as a claim reads them.
        CASE WHEN status = 'running' THEN COALESCE((
            SELECT jsonb_build_object({_LIMITS_JSON})
            FROM plait_tenants t WHERE t.tenant_id = %(tenant)s
        ), '{{}}'::jsonb) END AS tenant_limits
), journaled AS (
    INSERT INTO plait_run_events (run_id, seq, event, data)
    SELECT %(run_id)s, 1, pair->>0, pair->1 FROM json_array_elements(%(event)s::json) AS pair
), thread AS (
    -- Like the Agent Server, a thread's metadata names its graph and assistant.
    UPDATE plait_threads
    SET status = 'busy', updated_at = now(),
        graph = CASE WHEN %(first_run)s THEN %(graph)s ELSE graph END,
        version = CASE WHEN %(first_run)s THEN %(version)s ELSE version END,
        digest = CASE WHEN %(first_run)s THEN %(digest)s ELSE digest END,
        metadata = CASE WHEN %(first_run)s
            THEN jsonb_build_object(
                'graph_id', %(graph)s::text, 'assistant_id', %(assistant_id)s::text
            ) || metadata
            ELSE metadata END
    WHERE thread_id = %(thread_id)s
)
SELECT inserted.*,
       pg_notify(%(events)s, %(run_id)s || ' 1 ' || %(event)s),
       -- Streams that follow the thread from run to run wait for this (journal.new_runs).
       pg_notify(%(events)s, %(thread_hint)s),
       -- Workers are woken for a queued run only.
       CASE WHEN inserted.status = 'pending' THEN pg_notify(%(runs)s, %(run_id)s) END
FROM inserted
"""


async def release_run(pool: Pool, run_id: str, worker_id: str, attempt: int | None = None) -> bool:
    """Hand a run back as ``pending`` (SIGTERM): another worker continues it at once.

    Only the lease owner can (for ``attempt``, when given); returns whether it
    did. The attempt counter stays, so the next claim is ``attempt + 1``; an
    attempt handed back is not a lost one.
    """
    async with pool.connection() as conn, conn.transaction():
        cursor = await conn.execute(
            """
            UPDATE plait_runs
            SET status = %s, state = %s, lease_owner = NULL, lease_expires_at = NULL,
                state_detail = nullif(state_detail - 'retry' - 'waiting', '{}'::jsonb),
                updated_at = now()
            WHERE run_id = %s AND lease_owner = %s AND status = 'running'
              AND (%s::int IS NULL OR attempt = %s)
            RETURNING run_id
            """,
            (
                status_of(_HANDED_BACK),
                _HANDED_BACK,
                run_id,
                worker_id,
                attempt,
                attempt,
            ),
        )
        released = await cursor.fetchone() is not None
        if released:
            await conn.execute("SELECT pg_notify(%s, %s)", (RUNS_CHANNEL, run_id))
    return released


# --------------------------------------------------------------------------- expiry


async def expire_runs(pool: Pool, limit: int = 100) -> list[Run]:
    """End up to ``limit`` pending runs past their ``expires_at`` as ``expired``; return them.

    Only runs that never started: one handed back on SIGTERM or requeued goes on.

    Claims already pass them over; this records their end for whoever waits:
    status ``error`` with a message saying the run never ran, an ``error`` and
    an ``end`` event in the journal (streams and ``/join`` end), the webhook's
    call, and the thread ``busy`` while other runs wait on it, else ``idle``.
    Every worker sweeps; threads another transaction holds are skipped until
    the next sweep, and nothing is read twice. Idle, it costs one statement.
    """
    async with pool.connection() as conn, conn.transaction():
        cursor = await conn.execute(
            _EXPIRE,
            {
                "limit": limit,
                "status": status_of(_EXPIRED),
                "state": _EXPIRED,
                "sources": list(sources_of(_EXPIRED)),
            },
        )
        expired = [_run(row) for row in await cursor.fetchall()]
        if not expired:
            return []
        ends: dict[str, list[tuple[str, Any]]] = {
            run.run_id: [("error", {"error": "RunExpired", "message": run.error}), ("end", None)]
            for run in expired
        }
        await journal.append_runs(conn, ends)
        for run in expired:
            await webhooks.enqueue(conn, run, None)  # it never ran: no values
        for thread_id in sorted({run.thread_id for run in expired}):
            await _refresh_thread(conn, thread_id, None)
    return expired


# The threads' locks first (the lock order every run change keeps), skipping
# threads a run is being created or cancelled on; then the runs, re-checked.
_EXPIRE = f"""
WITH due AS (
    SELECT r.run_id FROM plait_threads t JOIN plait_runs r USING (thread_id)
    WHERE r.status = 'pending' AND r.expires_at <= now() AND r.attempt = 0
    ORDER BY r.expires_at
    LIMIT %(limit)s
    FOR NO KEY UPDATE OF t SKIP LOCKED
)
UPDATE plait_runs r
SET status = %(status)s, state = %(state)s, ended_at = now(), updated_at = now(),
    state_detail = coalesce(r.state_detail, '{{}}'::jsonb)
        || jsonb_build_object('expires_at', r.expires_at),
    error = 'the run expired: its deadline (expires_at ' || (to_json(r.expires_at) #>> '{{}}')
        || ') passed before a worker started it, so it never ran; '
        || 'queue it again with a later expires_at or a higher priority'
FROM due
WHERE r.run_id = due.run_id AND r.status = 'pending' AND r.attempt = 0
  AND r.state = ANY(%(sources)s)
RETURNING {_R_COLUMNS}
"""


# --------------------------------------------------------------------------- dead letters


async def note_progress(cursor: AsyncCursor[DictRow], lease: Lease) -> None:
    """In the caller's fenced transaction: the run finished a step, so its lost attempts
    so far were not its fault (they count only in a row, without a step between)."""
    await cursor.execute(
        "UPDATE plait_runs SET lost_attempts = 0 "
        "WHERE run_id = %s AND attempt = %s AND lost_attempts > 0",
        (lease.run_id, lease.attempt),
    )


def max_attempts_of(run: Run, default: int) -> int:
    """How many lost attempts ``run`` may have: its spec's ``max_attempts``, else ``default``."""
    return run.max_attempts or default


def dead_letter_of(run: Run, limit: int) -> dict[str, Any]:
    """The ``dead_letter`` record of a claimed run whose lost attempts reached ``limit``."""
    return {
        "reason": (
            f"{run.lost_attempts} attempts in a row lost their worker before finishing a step "
            f"(it crashed, was killed, stalled or was cut off; max_attempts {limit}): the step "
            "may be killing its worker. Fix the cause, then requeue the run"
        ),
        "attempts": run.lost_attempts,
        "max_attempts": limit,
        "at": datetime.now(UTC).isoformat(),
    }


async def requeue_run(
    pool: Pool, run_id: str, thread_id: str | None = None, *, tenant: str | None = None
) -> Run:
    """Queue a dead-lettered run again, with its lost attempts reset; return it (``pending``).

    It keeps its id, its attempt number (the next claim continues from the
    run's last checkpoint, decision 33) and its journal, whose next events
    follow on from its seq; the dead letter's ``error`` and ``end`` events are
    marked superseded, so a stream read after the requeue goes on through
    them to the new attempts. It waits behind the thread's active runs (a new
    place in the queue). Raises :class:`RunNotFound` (also for another
    thread's or tenant's run) or :class:`RunNotDeadLettered`.
    """
    where = {"run_id": run_id, "thread_id": thread_id, "tenant": tenant}
    async with pool.connection() as conn, conn.transaction():
        await conn.execute(
            """
            SELECT 1 FROM plait_threads t JOIN plait_runs r USING (thread_id)
            WHERE r.run_id = %(run_id)s
              AND (%(thread_id)s::text IS NULL OR r.thread_id = %(thread_id)s)
              AND (%(tenant)s::text IS NULL OR r.tenant_id = %(tenant)s)
            FOR NO KEY UPDATE OF t
            """,
            where,
        )
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_runs WHERE run_id = %(run_id)s "
            f"AND (%(thread_id)s::text IS NULL OR thread_id = %(thread_id)s) AND {OF_TENANT} "
            "FOR UPDATE",
            where,
        )
        row = await cursor.fetchone()
        if row is None:
            raise RunNotFound(run_id, thread_id, tenant)
        run = _run(row)
        if run.state != "dead_lettered":
            raise RunNotDeadLettered(run)
        cursor = await conn.execute(
            f"""
            UPDATE plait_runs
            SET status = %s, state = %s, queue_id = DEFAULT, lost_attempts = 0,
                dead_letter = NULL, error = NULL, ended_at = NULL, cancel_action = NULL,
                lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
                state_detail = nullif(state_detail - 'retry' - 'waiting', '{{}}'::jsonb)
            WHERE run_id = %s
            RETURNING {_COLUMNS}
            """,
            (status_of(_REQUEUED), _REQUEUED, run_id),
        )
        requeued = _run(await cursor.fetchone())
        await conn.execute(
            "UPDATE plait_run_events SET superseded = true "
            "WHERE run_id = %s AND event IN ('error', 'end') AND NOT superseded",
            (run_id,),
        )
        await _refresh_thread(conn, run.thread_id, None)  # busy again; wakes the workers
    return requeued


async def list_dead_letters(
    pool: Pool, *, tenant: str | None = None, limit: int = 100
) -> list[Run]:
    """Dead-lettered runs, newest first (of ``tenant``; ``None``: every tenant's)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM plait_runs WHERE dead_letter IS NOT NULL AND {OF_TENANT} "
            "ORDER BY updated_at DESC LIMIT %(limit)s",
            {"tenant": tenant, "limit": limit},
        )
        rows = await cursor.fetchall()
    return [_run(row) for row in rows]


# --------------------------------------------------------------------------- helpers


async def _replay(
    conn: AsyncConnection[DictRow], key: str, route: str, request_hash: str, tenant: str
) -> Run:
    """The run of an Idempotency-Key the tenant used before, if the request is the same."""
    cursor = await conn.execute(
        f"""
        SELECT k.request_hash, {_R_COLUMNS}
        FROM plait_idempotency_keys k JOIN plait_runs r USING (run_id)
        WHERE k.key = %s AND k.route = %s AND k.tenant_id = %s
        """,
        (key, route, tenant),
    )
    row = await cursor.fetchone()
    if row is None:
        # Its run was deleted in between (the key went with it, by cascade).
        raise IdempotencyMismatch(key, "(deleted)")
    if row["request_hash"] != request_hash:
        raise IdempotencyMismatch(key, row["run_id"])
    return _run(row)


async def _lock_thread(
    conn: AsyncConnection[DictRow], thread_id: str, if_not_exists: IfNotExists, tenant: str
) -> AsyncCursor[DictRow]:
    """Lock the tenant's thread row (created first when allowed); every run change takes it.

    Returns the cursor of the locked row (none: no such thread of ``tenant``), not yet read.
    """
    if if_not_exists == "create":
        await conn.execute(
            "INSERT INTO plait_threads (thread_id, tenant_id) VALUES (%s, %s) "
            "ON CONFLICT DO NOTHING",
            (thread_id, tenant),
        )
    # NO KEY UPDATE: serialises run changes on the thread, yet lets foreign-key
    # checks (inserting events, approvals) proceed.
    return await conn.execute(
        "SELECT * FROM plait_threads WHERE thread_id = %s AND tenant_id = %s FOR NO KEY UPDATE",
        (thread_id, tenant),
    )


def _first_run(thread: dict[str, Any], graph: GraphVersion) -> bool:
    """Whether this is the thread's first run (its graph gets recorded); refuse another digest."""
    if thread["graph"] is None:
        return True
    if (thread["graph"], thread["version"], thread["digest"]) != (
        graph.name,
        graph.version,
        graph.digest,
    ):
        record = ThreadRecord(
            **{
                key: thread[key]
                for key in (
                    "thread_id",
                    "graph",
                    "version",
                    "digest",
                    "git_sha",
                    "created_at",
                    "updated_at",
                )
            }
        )
        declared = (
            find_migration(graph.loaded.spec, record.version) is not None
            if record.graph == graph.name
            else None
        )
        raise ThreadSpecMismatch(record, graph.name, graph.version, graph.digest, declared)
    return False


async def _cancel_locked(
    conn: AsyncConnection[DictRow], run_id: str, status: str, action: CancelAction
) -> Run | None:
    """Cancel a locked active run; the updated run, or ``None`` when it was deleted."""
    if status == "pending":
        if action == "rollback":
            await conn.execute("DELETE FROM plait_runs WHERE run_id = %s", (run_id,))
            # Subscribers waiting on it re-read, find it gone and stop.
            await conn.execute("SELECT pg_notify(%s, %s)", (journal.EVENTS_CHANNEL, run_id))
            return None
        cursor = await conn.execute(
            f"""
            UPDATE plait_runs
            SET status = %s, state = %s, cancel_action = %s, ended_at = now(),
                updated_at = now()
            WHERE run_id = %s
            RETURNING {_COLUMNS}
            """,
            (status_of(_CANCELLED_PENDING), _CANCELLED_PENDING, action, run_id),
        )
        run = _run(await cursor.fetchone())
        await journal.append(conn, run_id, "end", None)
        await webhooks.enqueue(conn, run, None)  # it never ran: no values
        return run
    # Running: the notification naming it makes its worker heartbeat at once and
    # see the request (the next regular heartbeat would too). Rollback is the
    # stronger request and is never downgraded to interrupt.
    cursor = await conn.execute(
        f"""
        UPDATE plait_runs
        SET cancel_action = CASE WHEN cancel_action = 'rollback' THEN 'rollback' ELSE %s END,
            updated_at = now()
        WHERE run_id = %s
        RETURNING {_COLUMNS}
        """,
        (action, run_id),
    )
    run = _run(await cursor.fetchone())
    await conn.execute("SELECT pg_notify(%s, %s)", (RUNS_CHANNEL, run_id))
    return run


async def _cancel_timer_wait(
    conn: AsyncConnection[DictRow], run_id: str, action: CancelAction
) -> Run:
    """Cancel a locked run parked on ``wait`` timers: the timers stop, the run ends cancelled.

    The thread keeps its checkpoint (still ``interrupted``): a person may resume it.
    """
    await timers.cancel_of_run_in(conn, run_id)
    cursor = await conn.execute(
        f"""
        UPDATE plait_runs
        SET status = %s, state = %s, cancel_action = %s, updated_at = now(),
            state_detail = nullif(coalesce(state_detail, '{{}}'::jsonb) - 'waiting', '{{}}'::jsonb)
        WHERE run_id = %s
        RETURNING {_COLUMNS}
        """,
        (status_of(_CANCELLED_WAIT), _CANCELLED_WAIT, action, run_id),
    )
    return _run(await cursor.fetchone())


async def _refresh_thread(
    conn: AsyncConnection[DictRow], thread_id: str, after: ThreadStatus | None
) -> None:
    """``busy`` while runs wait or run; otherwise ``after`` (``None``: leave it, or idle)."""
    cursor = await conn.execute(
        f"SELECT run_id FROM plait_runs WHERE thread_id = %s AND {_ACTIVE} LIMIT 1",
        (thread_id,),
    )
    waiting = await cursor.fetchone()
    if waiting is not None:
        # The next run may be claimable now: wake the workers.
        await conn.execute("SELECT pg_notify(%s, %s)", (RUNS_CHANNEL, waiting["run_id"]))
        status: str = "busy"
    else:
        status = after or "idle"
    await conn.execute(
        "UPDATE plait_threads SET status = %s, updated_at = now() WHERE thread_id = %s",
        (status, thread_id),
    )


def _run(row: Mapping[str, Any] | None) -> Run:
    if row is None:
        raise LookupError("the database returned no row")
    return Run(
        run_id=row["run_id"],
        thread_id=row["thread_id"],
        assistant_id=row["assistant_id"] or "",
        graph=row["graph"],
        version=row["version"],
        status=row["status"],
        kwargs=row["kwargs"],
        metadata=row["metadata"],
        multitask_strategy=row["multitask_strategy"],
        attempt=row["attempt"],
        error=row["error"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        digest=row["digest"],
        cancel_action=row["cancel_action"],
        lease_owner=row["lease_owner"],
        lease_expires_at=row["lease_expires_at"],
        queue_id=row["queue_id"],
        tenant=row["tenant_id"],
        tenant_limits=row.get("tenant_limits"),
        lost_attempts=row["lost_attempts"],
        max_attempts=row["max_attempts"],
        dead_letter=row["dead_letter"],
        state=row["state"],
        state_detail=row["state_detail"],
        priority=row["priority"],
        expires_at=row["expires_at"],
    )


async def current_run_of_thread(pool: Pool, thread_id: str) -> tuple[str, int, str, str] | None:
    """The thread's first run still to finish, else its latest: ``(run_id, queue_id, graph,
    status)``."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            """
            SELECT run_id, queue_id, graph, status FROM plait_runs WHERE thread_id = %s
            ORDER BY status IN ('pending', 'running') DESC,
                     CASE WHEN status IN ('pending', 'running') THEN queue_id END,
                     queue_id DESC
            LIMIT 1
            """,
            (thread_id,),
        )
        row = await cursor.fetchone()
    return (row["run_id"], row["queue_id"], row["graph"], row["status"]) if row else None


async def next_run_of_thread(
    pool: Pool, thread_id: str, after_queue: int
) -> tuple[str, int, str] | None:
    """The thread's first run after ``after_queue`` in queue order."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT run_id, queue_id, graph FROM plait_runs WHERE thread_id = %s "
            "AND queue_id > %s ORDER BY queue_id LIMIT 1",
            (thread_id, after_queue),
        )
        row = await cursor.fetchone()
    return (row["run_id"], row["queue_id"], row["graph"]) if row else None


async def add_run_metadata(
    pool: Pool, run_id: str, attempt: int, added: Mapping[str, Any]
) -> int | None:
    """Merge ``added`` into the run's metadata while ``attempt`` is its current one.

    Returns the seq its journal's next event gets, or ``None`` when the run
    has moved on to another attempt (nothing is written).
    """
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "UPDATE plait_runs SET metadata = metadata || %s WHERE run_id = %s AND attempt = %s "
            "RETURNING event_seq + 1 AS next_seq",
            (Jsonb(dict(added)), run_id, attempt),
        )
        row = await cursor.fetchone()
    return None if row is None else int(row["next_seq"])
