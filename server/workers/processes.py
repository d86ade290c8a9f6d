"""``plait serve --worker-processes K``: workers in child processes the server supervises.

In one process the API's event loop and the graphs it executes share one core
(the GIL): under load, a request waits behind graph steps. With ``K`` child
``plait worker`` processes the API keeps its loop to itself and the graphs run
on other cores, sharing the run queue in Postgres exactly as separate ``plait
worker`` processes do (claims, leases, the journal, NOTIFY).

The children never outlive the server: each asks the kernel for SIGTERM when
its parent dies (``PR_SET_PDEATHSIG``, even after a SIGKILL of the server), and
the server's shutdown sends them SIGTERM (they hand their runs back) and waits.
A child that exits on its own is started again after a pause.

The children keep their metrics (steps, runs, model and tool calls) in files of a
private folder, prometheus-client's multiprocess mode, and the server's ``GET
/metrics`` adds them to its own (server/operations/metrics.py): counts of a child
that was restarted are kept, so they never go back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from prometheus_client import multiprocess

from plait.engine.store import DATABASE_URL_ENV
from plait.server.workers.webhook_urls import WebhookPolicy

log = logging.getLogger("plait.server")

#: Set in a child's environment: the pid of the ``plait serve`` that supervises it.
SUPERVISOR_ENV = "PLAIT_SUPERVISOR_PID"
#: prometheus-client's own variable: where a child keeps its metrics (multiprocess mode).
METRICS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: How long a stopping child may take to hand its runs back before it is killed.
STOP_SECONDS = 30.0
#: Pause before a child that exited on its own is started again.
RESTART_SECONDS = 1.0
_PR_SET_PDEATHSIG = 1


def die_with_supervisor() -> None:
    """In a child of ``plait serve``: get SIGTERM when the server dies (Linux).

    Called early by ``plait worker``. When the server died before this call,
    the process is already an orphan: it stops at once.
    """
    supervisor = os.environ.get(SUPERVISOR_ENV)
    if not supervisor or not sys.platform.startswith("linux"):
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != int(supervisor):
        os.kill(os.getpid(), signal.SIGTERM)


def child_command_line(concurrency: int, specs_dir: Path, max_attempts: int) -> list[str]:
    """The command line of one child worker (``plait worker``, by this interpreter)."""
    return [
        sys.executable,
        "-m",
        "plait.server.cli.app",
        "worker",
        "--concurrency",
        str(concurrency),
        "--specs",
        str(specs_dir),
        "--max-attempts",
        str(max_attempts),
    ]


class WorkerProcesses:
    """Start, restart and stop ``count`` child workers on database ``url``."""

    def __init__(
        self,
        count: int,
        *,
        concurrency: int,
        specs_dir: Path,
        url: str,
        max_attempts: int,
        webhook_policy: WebhookPolicy | None = None,
    ) -> None:
        self.count = count
        self.command = child_command_line(concurrency, specs_dir, max_attempts)
        # The server's resolved URL: a child never starts an embedded server of its own.
        self.env = dict(os.environ, **{DATABASE_URL_ENV: url, SUPERVISOR_ENV: str(os.getpid())})
        if webhook_policy is not None:  # e.g. --webhook-allow-private: the children's too
            self.env.update(webhook_policy.to_env())
        self._children: list[asyncio.subprocess.Process | None] = [None] * count
        self._stopping = False
        #: The children's metrics files, while they run (:meth:`running`).
        self.metrics_dir: Path | None = None

    @property
    def pids(self) -> list[int]:
        """Process ids of the children running now."""
        return [child.pid for child in self._children if child is not None]

    async def _supervise(self, slot: int) -> None:
        """Keep child ``slot`` running until the server stops."""
        while not self._stopping:
            # Spawned from the event loop's thread: PR_SET_PDEATHSIG follows the
            # thread that forked, and the loop's lives as long as the server.
            try:
                child = await asyncio.create_subprocess_exec(*self.command, env=self.env)
            except OSError as exc:  # e.g. out of processes or memory: try again, not never
                log.error("cannot start a worker process: %s; trying again", exc)
                await asyncio.sleep(RESTART_SECONDS)
                continue
            self._children[slot] = child
            if self._stopping:  # the server began stopping while this child started
                child.send_signal(signal.SIGTERM)
            code = await child.wait()
            self._children[slot] = None
            if self.metrics_dir is not None:  # its gauges end with it; its counts stay
                multiprocess.mark_process_dead(child.pid, str(self.metrics_dir))
            if self._stopping:
                return
            log.error("worker process %s exited with %s; starting it again", child.pid, code)
            await asyncio.sleep(RESTART_SECONDS)

    async def _stop(self, tasks: list[asyncio.Task[None]]) -> None:
        """SIGTERM every child (its runs go back to the queue), then wait; kill the late."""
        self._stopping = True
        for child in self._children:
            if child is not None and child.returncode is None:
                child.send_signal(signal.SIGTERM)
        _, late = await asyncio.wait(tasks, timeout=STOP_SECONDS)
        for child in self._children:
            if child is not None and child.returncode is None:
                log.error("worker process %s did not stop in time; killing it", child.pid)
                child.kill()
        for task in late:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[WorkerProcesses]:
        """The children run inside this context and are stopped when it exits."""
        self.metrics_dir = Path(tempfile.mkdtemp(prefix="plait-worker-metrics-"))
        self.env[METRICS_DIR_ENV] = str(self.metrics_dir)
        tasks = [
            asyncio.create_task(self._supervise(slot), name=f"worker process {slot}")
            for slot in range(self.count)
        ]
        try:
            yield self
        finally:
            await self._stop(tasks)
            shutil.rmtree(self.metrics_dir, ignore_errors=True)
            self.metrics_dir = None
