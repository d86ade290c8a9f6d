"""Uploaded YAML is read and linted in worker processes, with a time limit, off the loop.

``plait serve`` answers every request on one event loop. Reading a spec is
CPU work in pure Python (ruamel.yaml, pydantic, lint) that a tenant chooses:
before the limits of :mod:`plait.engine.spec.limits` a 50 KB body of ``[`` kept the
loop busy for 30 s, and ``GET /ok`` waited as long. The limits make bad YAML
cheap, but a thread could not stop what they miss (Python cannot kill a
thread, and a CPU-bound thread still takes the GIL from the loop), so the
text goes to a small pool of processes (pebble's ``ProcessPool``) whose
task is killed, and its process replaced, when it takes longer than
``seconds``; the request then gets a located ``spec-check-timeout`` issue.

The stored versions a spec may refer to (``subgraph`` refs) travel with each
task as text; each process keeps what it parsed, by text. Workers do not use
the pool: they compile stored versions, which passed it at upload, in their
own process (docs/decisions.md, 62).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
from collections.abc import Iterable, Sequence
from concurrent.futures import TimeoutError as FutureTimeout

import pebble

from plait.engine.spec import LoadedSpec, SpecError, SpecIssue, SpecRegistry, check_text, parse_spec

logger = logging.getLogger("plait.server")

#: Stored versions as ``(label, YAML text)``: what a task needs to resolve refs.
StoredTexts = tuple[tuple[str, str], ...]
#: Tasks waiting per process before a request is refused as busy.
QUEUED_PER_PROCESS = 8


class SpecChecksBusy(Exception):
    """Too many specs wait for a worker process (HTTP 503 with ``Retry-After``)."""

    #: Seconds a client should wait before it tries again (a check takes milliseconds).
    retry_after = 1

    def __init__(self, waiting: int) -> None:
        super().__init__(
            f"{waiting} specs are waiting to be checked on this server; retry in a moment"
        )


class SpecCheckFailed(Exception):
    """A worker process ended while checking a spec (a crash in a library: HTTP 500)."""


class SpecChecks:
    """A bounded pool of processes that read and lint spec text (see the module doc)."""

    def __init__(self, processes: int = 2, seconds: float = 10.0) -> None:
        self.processes = processes
        self.seconds = seconds
        self._waiting = 0
        self._limit = processes * QUEUED_PER_PROCESS
        self._pool: pebble.ProcessPool | None = None

    def start(self) -> None:
        """Start the processes (in the background: the first task may wait for them)."""
        # forkserver: workers fork from a clean process that imported the spec
        # modules once, not from this one with its threads and event loop.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        self._pool = pebble.ProcessPool(max_workers=self.processes, context=context)
        for _ in range(self.processes):
            self._pool.schedule(_warm)

    def close(self) -> None:
        """Stop the processes (a running task is abandoned)."""
        if self._pool is not None:
            self._pool.stop()
            self._pool.join()
            self._pool = None

    async def check(
        self, text: str, file: str, stored: Iterable[tuple[str, str]], *, keep: bool
    ) -> tuple[LoadedSpec | None, list[SpecIssue]]:
        """The spec (when ``keep`` and it loads) and every issue of ``text``.

        Raises :class:`SpecChecksBusy` when too many checks wait, and
        :class:`SpecCheckFailed` when the process checking it died.
        """
        if self._pool is None:
            raise RuntimeError("SpecChecks.start() was not called")
        if self._waiting >= self._limit:
            raise SpecChecksBusy(self._waiting)
        self._waiting += 1
        try:
            future = self._pool.schedule(
                check_in_process, (text, file, tuple(stored), keep), timeout=self.seconds
            )
            try:
                return await asyncio.wrap_future(future)
            except FutureTimeout:
                logger.warning("checking %s took over %gs: stopped", file, self.seconds)
                return None, [_timeout_issue(file, self.seconds)]
            except pebble.ProcessExpired as exc:
                logger.error("the process checking %s ended: %s", file, exc)
                raise SpecCheckFailed(
                    f"the process checking the spec ended unexpectedly (exit code "
                    f"{exc.exitcode}); the server log has the details"
                ) from None
        finally:
            self._waiting -= 1


# --------------------------------------------------------------------------- in the processes


def check_in_process(
    text: str, file: str, stored: Sequence[tuple[str, str]], keep: bool
) -> tuple[LoadedSpec | None, list[SpecIssue]]:
    """What a pool process runs: read and lint ``text`` against the stored versions."""
    registry = SpecRegistry(spec for label, body in stored if (spec := _stored(body, label)))
    loaded, issues = check_text(text, file, registry)
    return (loaded if keep else None), issues


@functools.lru_cache(maxsize=512)
def _stored(text: str, label: str) -> LoadedSpec | None:
    """A stored version, parsed once per process (its text never changes)."""
    try:
        return parse_spec(text, label)
    except SpecError:
        return None  # stored before a limit existed: refs to it stay unresolved


def _warm() -> None:
    """A first task: the process is forked and ready before a request needs it."""


def _timeout_issue(file: str, seconds: float) -> SpecIssue:
    return SpecIssue(
        file=file,
        line=1,
        column=1,
        pointer="",
        message=f"reading and checking the spec took longer than this server's limit of "
        f"{seconds:g}s, so it was stopped",
        fix="make the spec smaller or simpler (split it into subgraphs); an operator can "
        "raise PLAIT_SPEC_CHECK_SECONDS",
        code="spec-check-timeout",
    )
