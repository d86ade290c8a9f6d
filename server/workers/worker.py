"""The worker: claims queued runs and executes up to N of them at once.

One :class:`Worker` per process is enough (``plait serve`` runs some, ``plait
worker`` runs one). It

- executes up to its concurrency, above the first ten only while its core has
  room (server/workers/admission.py);
- claims pending runs under a lease when woken by ``NOTIFY plait_runs_pending``
  (a run starts within milliseconds of its creation), or on a poll interval as
  a fallback when a notification is lost (idle, it costs one query per interval);
  a worker nearly full, with runs queued, waits up to
  :data:`CLAIM_LINGER_SECONDS` for a quarter of its slots to come free and claims
  them together (one claim for several runs, not one per run that ends);
- heartbeats every ``lease / 3`` for all its runs, and stops a run whose
  cancellation was asked for (``interrupt`` or ``rollback``), or that another
  worker took over (every write of a run needs its lease: server/queue/leases.py);
  a run claimed with a cancel already asked (its previous worker died first)
  stops at once;
- dead-letters a run whose attempts lost their worker ``max_attempts`` times in a row
  (the spec's ``max_attempts`` wins), instead of running it again;
- fires due durable timers (server/workers/timer_firer.py): resumes runs parked on a
  ``wait`` node, and resolves approvals past their expiry (the approval node applies
  the spec's ``on_expire`` itself when it resumes after the expiry);
- ends pending runs past their deadline (``expires_at``) as ``expired``; claims order a
  tenant's runs by priority, aged by ``aging_seconds`` (server/queue/queueing.py);
- calls the webhooks of ended runs (server/workers/webhook_sender.py), grades sampled
  finished runs (server/workers/grader_runner.py), fires due crons
  (server/workers/cron_firer.py) and deletes store items past their TTL;
- on :meth:`stop` (SIGTERM) claims nothing more, cancels its runs' graphs and
  hands their leases back, so another worker continues them from their last
  checkpoint at once; then it ends what tool calls left running (processes,
  MCP stdio servers: ``engine/tools/children.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import psycopg
from langgraph.store.postgres.aio import AsyncPostgresStore

from plait.engine.store import Pool, ReadAhead, open_item_store
from plait.engine.tools import ToolResultStore, stop_tool_processes
from plait.server.operations import metrics
from plait.server.queue import queueing, runs
from plait.server.queue.defaults import DEFAULT_LEASE_SECONDS, DEFAULT_MAX_ATTEMPTS
from plait.server.queue.fenced import FencedToolResultStore
from plait.server.queue.journal import JournalListener
from plait.server.queue.journal_writer import JournalCommitter
from plait.server.queue.runs import DirectClaim, Run
from plait.server.workers.admission import Admission, LoopLag
from plait.server.workers.cron_firer import CRON_POLL_SECONDS, CronFirer
from plait.server.workers.execution import (
    GraphCache,
    RunStopper,
    StopReason,
    execute_run,
    read_ahead,
)
from plait.server.workers.grader_runner import GraderRunner
from plait.server.workers.mcp_task_poller import McpTaskPoller
from plait.server.workers.timer_firer import TIMER_POLL_SECONDS, TimerFirer
from plait.server.workers.webhook_sender import WebhookSender
from plait.server.workers.webhook_urls import WebhookPolicy

log = logging.getLogger(__name__)

#: How often parked MCP tasks are polled (engine/tools/mcp/tasks.py).
MCP_TASK_POLL_SECONDS = 0.5

#: How often due webhook deliveries are looked for (a run's end is sent within it).
WEBHOOK_POLL_SECONDS = 0.5

#: How often owed scores are looked for (grading is off the runs' path: no hurry).
GRADER_POLL_SECONDS = 1.0

#: How long a nearly full worker waits for more free slots before it claims queued runs.
CLAIM_LINGER_SECONDS = 0.02


def claim_batch(allowed: int) -> int:
    """Free slots a worker allowed ``allowed`` runs claims at once, rather than linger:
    a quarter of them (at least one)."""
    return max(1, allowed // 4)


def default_worker_id() -> str:
    """A worker id unique across hosts and processes: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Worker:
    """Claims and executes runs until :meth:`stop`; see the module docstring."""

    def __init__(
        self,
        pool: Pool,
        *,
        worker_id: str | None = None,
        concurrency: int = 10,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        poll_seconds: float = 1.0,
        sweep_seconds: float = 5.0,
        specs_dir: Path | None = None,
        tool_results: ToolResultStore | None = None,
        conninfo: str | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        webhook_policy: WebhookPolicy | None = None,
        aging_seconds: float | None = None,
        listener: JournalListener | None = None,
        claim_linger_seconds: float = CLAIM_LINGER_SECONDS,
    ) -> None:
        if concurrency < 1:
            raise ValueError("a worker needs a concurrency of at least 1")
        if max_attempts < 1:
            raise ValueError("a worker needs max_attempts of at least 1")
        if conninfo is None and not isinstance(pool.conninfo, str):
            raise ValueError("give the worker a conninfo for its LISTEN connection")
        self.pool = pool
        self.worker_id = worker_id or default_worker_id()
        self.concurrency = concurrency
        # Above its first runs, takes more only while its core has room (admission.py).
        self._loop_lag = LoopLag()
        self.admission = Admission(concurrency, lag=self._loop_lag.read)
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds
        self.claim_linger_seconds = claim_linger_seconds
        self.sweep_seconds = sweep_seconds
        self.max_attempts = max_attempts
        # A queued run gains a priority level per this many seconds waited (queueing.py).
        self.aging_seconds = aging_seconds or queueing.aging_seconds()
        # Its own connection, outside the pool: LISTEN holds it for the worker's life.
        self._conninfo = conninfo or str(pool.conninfo)
        self.graphs = GraphCache(pool, specs_dir)
        # None: each run records under its lease (FencedToolResultStore).
        self.tool_results = tool_results
        # One writer for the events of all its runs: one commit per round, not per run.
        self.journal = JournalCommitter(pool, owner=self.worker_id)
        # The API's, when the worker runs in its process: streams get a run's end at its commit.
        self.listener = listener
        # Resumes threads parked on MCP tasks (server/workers/mcp_task_poller.py).
        self.mcp_tasks = McpTaskPoller(pool)
        # LangGraph's long-term store for its runs' nodes; it needs the running loop (run()).
        self.items: AsyncPostgresStore | None = None
        # Calls the webhooks that ended runs owe (server/workers/webhook_sender.py).
        self.webhooks = WebhookSender(pool, self.worker_id, policy=webhook_policy)
        # Grades sampled finished runs (server/workers/grader_runner.py).
        self.graders = GraderRunner(pool, self.worker_id, self.graphs)
        # Creates the runs of due crons (server/workers/cron_firer.py).
        self.crons = CronFirer(pool, specs_dir)
        # Resumes parked waits and expires approvals when due (server/workers/timer_firer.py).
        self.timers = TimerFirer(pool)
        #: Set once the worker listens for runs (it may have claimed some already).
        self.started = asyncio.Event()
        self._active: dict[str, tuple[asyncio.Task[object], RunStopper]] = {}
        # The attempt of each active run (its lease: heartbeats renew that one only).
        self._attempts: dict[str, int] = {}
        self._wake = asyncio.Event()
        # Whether a claim may find runs: a notification came, the last claim filled
        # every free slot, or the poll interval passed. A run that ends frees a slot
        # but claims only then, not after every run (the query takes an advisory lock).
        self._maybe_more = True
        self._beat_now = asyncio.Event()
        self._stopping = False
        # Slots promised to runs this process is creating (reserve_direct / adopt).
        self._reserved = 0

    @property
    def active_runs(self) -> list[str]:
        """Ids of the runs this worker executes now."""
        return list(self._active)

    @property
    def queue_idle(self) -> bool:
        """Whether the worker's last claim found no run to take and none was announced since."""
        return not self._maybe_more

    def reserve_direct(self) -> DirectClaim | None:
        """A slot for a run this process creates, or None when the worker has no room.

        Give the result to ``runs.create_run(direct=...)``; then :meth:`adopt`
        the run when it came back claimed for this worker, else
        :meth:`release_reserved` (the run was queued, or creating it failed).
        """
        # Runs may be waiting in the queue: they go first, and a slot held for a
        # run that will be queued would only keep the claim loop from filling it.
        if self._stopping or not self.started.is_set() or not self.queue_idle:
            return None
        busy = len(self._active) + self._reserved
        if self.admission.allowed(busy) - busy <= 0:
            return None
        self._reserved += 1
        return DirectClaim(self.worker_id, self.lease_seconds)

    def adopt(self, run: Run) -> None:
        """Execute ``run``, created claimed for this worker in a :meth:`reserve_direct` slot."""
        self._reserved -= 1
        self._start(run)
        if self._stopping:
            # Created while the worker began to stop: handed back to the queue at once.
            self.cancel(run.run_id, "release")

    def release_reserved(self) -> None:
        """Give back a slot of :meth:`reserve_direct` that no run took."""
        self._reserved -= 1
        self._wake.set()  # the claim loop may take a queued run in it

    def stop(self) -> None:
        """Stop claiming and hand the running runs back; :meth:`run` returns once done.

        Safe to call from a signal handler (on the event loop's thread).
        """
        self._stopping = True
        self._wake.set()

    async def run(self) -> None:
        """Claim and execute runs until :meth:`stop`, then release the unfinished ones."""
        self.journal.start()
        self._loop_lag.start()
        self.items = open_item_store(self.pool)
        helpers = [
            asyncio.create_task(self._listen(), name=f"{self.worker_id} listen"),
            asyncio.create_task(
                self._every(self.lease_seconds / 3, self._heartbeat, self._beat_now),
                name=f"{self.worker_id} hb",
            ),
            asyncio.create_task(
                self._every(TIMER_POLL_SECONDS, self.timers.fire_due),
                name=f"{self.worker_id} timers",
            ),
            asyncio.create_task(
                self._every(self.sweep_seconds, self.expire_runs),
                name=f"{self.worker_id} run expiry",
            ),
            asyncio.create_task(
                self._every(MCP_TASK_POLL_SECONDS, self.mcp_tasks.poll_once),
                name=f"{self.worker_id} mcp tasks",
            ),
            asyncio.create_task(
                self._every(WEBHOOK_POLL_SECONDS, self.webhooks.send_due),
                name=f"{self.worker_id} webhooks",
            ),
            asyncio.create_task(
                self._every(GRADER_POLL_SECONDS, self.graders.grade_due),
                name=f"{self.worker_id} graders",
            ),
            asyncio.create_task(
                self._every(CRON_POLL_SECONDS, self.crons.fire_due),
                name=f"{self.worker_id} crons",
            ),
            asyncio.create_task(
                self._every(self.sweep_seconds, self.crons.delete_ended_threads),
                name=f"{self.worker_id} cron threads",
            ),
            asyncio.create_task(
                self._every(self.sweep_seconds, self._sweep_store),
                name=f"{self.worker_id} store ttl",
            ),
        ]
        try:
            await self._claim_loop()
        finally:
            self._loop_lag.stop()
            await self._hand_back()
            await stop_tool_processes()  # no process of a tool call outlives the worker
            await self.journal.close()
            for task in helpers:
                task.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)
            await self.webhooks.close()

    async def _claim_loop(self) -> None:
        loop = asyncio.get_running_loop()
        # When a nearly full worker first had a slot free for the queue (None: it has not).
        lingering: float | None = None
        while not self._stopping:
            # Cleared before claiming: a notification during the claim wakes the next round.
            self._wake.clear()
            active = len(self._active) + self._reserved
            allowed = self.admission.allowed(active)
            free = allowed - active
            wait = self.poll_seconds
            if free > 0 and self._maybe_more:
                # With runs queued, each run that ends frees one slot: claiming it alone
                # costs a claim (a transaction, a lock, a ranking query) per run. A nearly
                # full worker waits a moment for a few slots and claims them at once.
                lingering = loop.time() if lingering is None else lingering
                wait = lingering + self.claim_linger_seconds - loop.time()
                if free >= claim_batch(allowed) or wait <= 0:
                    lingering = None
                    if await self._claim(free):
                        continue  # maybe more are waiting; a full worker waits for a free slot
                    wait = self.poll_seconds
            if not self._stopping:
                try:
                    async with asyncio.timeout(wait):
                        await self._wake.wait()
                except TimeoutError:
                    if lingering is None:
                        # The fallback poll: lost notifications, leases of dead workers.
                        self._maybe_more = True

    async def _claim(self, free: int) -> bool:
        """Claim and start up to ``free`` runs; whether it took that many (more may wait)."""
        # Cleared before claiming: a notification during the claim may name a run the
        # claim did not see, and sets it again.
        self._maybe_more = False
        try:
            claimed = await runs.claim_runs(
                self.pool,
                self.worker_id,
                free,
                self.lease_seconds,
                executing=list(self._active),
                aging_seconds=self.aging_seconds,
            )
        except psycopg.Error:
            log.exception("worker %s: claiming runs failed", self.worker_id)
            claimed = []
        for run in claimed:
            self._start(run)
        if len(claimed) == free:
            self._maybe_more = True
            return True
        return False

    def _start(self, run: Run) -> None:
        stopper = RunStopper()
        if run.cancel_action is not None:
            # A cancel asked of its previous worker (which died or handed it back
            # before acting on it): stop before running anything, not at the first
            # heartbeat, a third of a lease away.
            stopper.stop(run.cancel_action)
        # Sent first: its round trip overlaps the run's set-up.
        ahead = read_ahead(run, self.pool)
        task: asyncio.Task[object] = asyncio.create_task(
            self._execute(run, stopper, ahead), name=f"run {run.run_id}"
        )
        self._active[run.run_id] = (task, stopper)
        self._attempts[run.run_id] = run.attempt

        def done(_: asyncio.Task[object]) -> None:
            self._active.pop(run.run_id, None)
            self._attempts.pop(run.run_id, None)
            self._wake.set()  # a slot is free

        task.add_done_callback(done)

    async def _execute(self, run: Run, stopper: RunStopper, ahead: ReadAhead) -> object:
        try:
            return await execute_run(
                run,
                self.pool,
                worker_id=self.worker_id,
                graphs=self.graphs,
                stopper=stopper,
                tool_results=self.tool_results or FencedToolResultStore(self.pool, run.lease),
                journal=self.journal,
                max_attempts=self.max_attempts,
                items=self.items,
                read_ahead=ahead,
                listener=self.listener,
            )
        except Exception:
            # Recording the end failed (e.g. the database went away): the lease
            # expires and a worker continues the run from its last checkpoint.
            log.exception("worker %s: run %s failed to record its end", self.worker_id, run.run_id)
            return None
        finally:
            ahead.discard()

    def cancel(self, run_id: str, reason: StopReason) -> bool:
        """Stop one of this worker's runs; False when it does not execute ``run_id``."""
        entry = self._active.get(run_id)
        if entry is None:
            return False
        entry[1].stop(reason)
        return True

    async def _hand_back(self) -> None:
        """Release every unfinished run so another worker continues it."""
        for _, stopper in list(self._active.values()):
            stopper.stop("release")
        tasks = [task for task, _ in self._active.values()]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _heartbeat(self) -> None:
        if not self._attempts:
            return
        to_stop = await runs.heartbeat(
            self.pool, self.worker_id, dict(self._attempts), self.lease_seconds
        )
        for run_id in to_stop:
            run = await runs.get_run(self.pool, run_id)
            held = (self.worker_id, self._attempts.get(run_id))
            if run is None or (run.lease_owner, run.attempt) != held:
                self.cancel(run_id, "lost")
            elif run.cancel_action is not None:
                self.cancel(run_id, run.cancel_action)

    async def _sweep_store(self) -> None:
        """Delete the store's items past their TTL (reads already skip them)."""
        if self.items is not None:
            await self.items.sweep_ttl()

    async def expire_runs(self) -> int:
        """End the pending runs past their deadline as ``expired``; return how many.

        Claims never take them; this tells their waiters, frees their threads
        and counts them (``plait_runs_ended_total{state="expired"}``).
        """
        ended = await runs.expire_runs(self.pool)
        for run in ended:
            metrics.run_ended(run.graph, run.state)
            log.info("run expired", extra={"run_id": run.run_id, "status": run.state})
        return len(ended)

    async def _every(
        self,
        seconds: float,
        job: Callable[[], Awaitable[object]],
        early: asyncio.Event | None = None,
    ) -> None:
        """Run ``job`` every ``seconds`` (or when ``early`` is set) until cancelled.

        A failure is logged, not fatal.
        """
        while True:
            if early is not None:
                early.clear()
            try:
                await job()
            except Exception:
                # Whatever went wrong, the loop must go on: a dead heartbeat loses every lease.
                log.exception("worker %s: %s failed", self.worker_id, job.__name__)
            if early is None:
                await asyncio.sleep(seconds)
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(seconds):
                    await early.wait()

    async def _listen(self) -> None:
        """Wake the claim loop on each notification; reconnect when the connection drops."""
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True)
                async with conn:
                    await conn.execute(f"LISTEN {runs.RUNS_CHANNEL}")
                    self.started.set()
                    # Runs created before LISTEN took effect are found by this claim.
                    self._maybe_more = True
                    self._wake.set()
                    async for notification in conn.notifies():
                        self._maybe_more = True
                        self._wake.set()
                        if notification.payload in self._active:
                            # Our run changed (e.g. a cancel was asked): look now, not
                            # at the next heartbeat.
                            self._beat_now.set()
            except (psycopg.Error, OSError):
                log.exception("worker %s: listening for runs failed", self.worker_id)
                self.started.set()  # polling still works
                await asyncio.sleep(self.poll_seconds)
