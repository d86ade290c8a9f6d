"""Processes tool calls start, ended when their call fails and when the worker stops.

A tool call owns the processes started while it runs, in its task or thread
and in the tasks and threads those start (they inherit its context):

- ``subprocess`` (``Popen``, ``run``, ``check_output``, ...) is seen through
  the interpreter's audit hook (the ``subprocess.Popen`` event, raised in the
  caller's thread just before the process is started);
- ``asyncio.create_subprocess_exec`` / ``_shell`` through the running loop's
  ``subprocess_exec`` / ``subprocess_shell``, wrapped once per loop (uvloop
  starts processes without ``Popen``, so the hook does not see them).

The rule (docs/governance.md, "Timeouts"): when a call does not return (it
timed out, raised, or was cancelled with its run), every process it owns that
still runs, with the descendants it has then, gets SIGTERM, and SIGKILL
:data:`GRACE_SECONDS` later if it is still there; the call's thread, should it
still run (a sync tool cannot be stopped), may start no more processes. A call
that returned leaves its processes alone; :func:`stop_all` (a stopping worker)
ends them then.

Nothing else is touched: processes are found by owner, never by a scan for
what looks like a tool's, so the MCP hub's stdio servers (started in a context
no call owns, ``engine/tools/mcp/hub.py``), the embedded Postgres and other
calls' processes are safe from an unrelated timeout. Linux only (``/proc``);
elsewhere nothing is tracked.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

#: Seconds between SIGTERM and SIGKILL.
GRACE_SECONDS = 2.0
_PROC = "/proc"
_SUPPORTED = sys.platform == "linux"


@dataclass(frozen=True)
class Process:
    """A process seen alive: its pid and start time (a reused pid has another start time)."""

    pid: int
    started: int

    def alive(self) -> bool:
        """Whether it still runs (a zombie has ended: it only waits to be reaped)."""
        found = _stat(self.pid)
        return found is not None and found[2] == self.started and found[0] not in "ZX"


@dataclass
class _Owner:
    """The processes of one tool call."""

    label: str
    #: Started through ``Popen``: the pid is known once the process started.
    popens: list[subprocess.Popen[Any]] = field(default_factory=list)
    #: Started on the loop, seen right after they started.
    started: dict[int, Process] = field(default_factory=dict)
    #: Set when the call did not return: its context may start no more processes.
    failed: bool = False

    def starting(self) -> None:
        if self.failed:
            raise RuntimeError(
                f"tool call {self.label} has ended (timed out, failed or cancelled); "
                "it may not start processes"
            )

    def processes(self) -> list[Process]:
        """The call's processes that still run."""
        found = dict(self.started)
        for popen in self.popens:
            # A reaped process (returncode set) is gone; its pid may be another's now.
            pid = popen.pid
            if (
                pid is not None
                and popen.returncode is None
                and pid not in found
                and (process := _process(pid)) is not None
            ):
                found[pid] = process
        self.popens.clear()  # references held only until the call ends
        return [process for process in found.values() if process.alive()]


_OWNER: contextvars.ContextVar[_Owner | None] = contextvars.ContextVar(
    "plait_tool_processes", default=None
)
#: Processes of calls that returned, still running when last looked at.
_LEFT: set[Process] = set()
_LEFT_LOCK = threading.Lock()
_HOOKED = False
_TRACKED_LOOPS: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


@contextlib.contextmanager
def owned_by(label: str) -> Iterator[None]:
    """Make the block's processes a tool call's (``label`` names it in messages)."""
    if not _SUPPORTED:
        yield
        return
    _install()
    owner = _Owner(label)
    token = _OWNER.set(owner)
    try:
        yield
    except BaseException:
        owner.failed = True
        processes = owner.processes()
        if processes:
            log.info("tool call %s ended; ending its processes %s", label, _pids(processes))
            end(processes)
        raise
    finally:
        _OWNER.reset(token)
    left = owner.processes()
    if left:
        with _LEFT_LOCK:
            _LEFT.difference_update([p for p in _LEFT if not p.alive()])
            _LEFT.update(p for p in left if p.alive())


def unowned_context() -> contextvars.Context:
    """A copy of the current context in which no tool call owns new processes."""
    context = contextvars.copy_context()
    context.run(_OWNER.set, None)
    return context


def end(processes: list[Process]) -> None:
    """SIGTERM ``processes`` and their descendants; SIGKILL the survivors after the grace."""
    doomed = _with_descendants(processes)
    _signal(doomed, signal.SIGTERM)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        timer = threading.Timer(GRACE_SECONDS, _signal, (doomed, signal.SIGKILL))
        timer.daemon = True
        timer.start()
        return
    loop.call_later(GRACE_SECONDS, _signal, doomed, signal.SIGKILL)


async def stop_all(grace: float = GRACE_SECONDS) -> None:
    """End what tool calls of this process left running: for a stopping worker.

    The MCP hub's sessions are closed first (their stdio servers exit), then
    every process a returned call left behind gets SIGTERM and, after
    ``grace`` seconds, SIGKILL.
    """
    # Only if MCP was used: importing the hub loads the MCP SDK.
    hub = sys.modules.get("plait.engine.tools.mcp.hub")
    if hub is not None:
        await hub.HUB.aclose()
    with _LEFT_LOCK:
        left = list(_LEFT)
        _LEFT.clear()
    doomed = _with_descendants([p for p in left if p.alive()])
    if not doomed:
        return
    log.info("ending %d processes tool calls left running: %s", len(doomed), _pids(doomed))
    _signal(doomed, signal.SIGTERM)
    deadline = time.monotonic() + grace
    # Other processes' exits (not all our children): nothing to wait on but /proc.
    while any(p.alive() for p in doomed) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    _signal(doomed, signal.SIGKILL)


def left_running() -> list[Process]:
    """Processes of calls that returned and still run (what :func:`stop_all` would end)."""
    with _LEFT_LOCK:
        return [p for p in _LEFT if p.alive()]


# ----------------------------------------------------------------- tracking


def _install() -> None:
    """The audit hook (once per process) and the running loop's wrappers (once per loop)."""
    global _HOOKED
    if not _HOOKED:
        _HOOKED = True
        sys.addaudithook(_audit)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    if loop not in _TRACKED_LOOPS:
        _track_loop(loop)
        _TRACKED_LOOPS.add(loop)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # Called for every audited event of the process: return at once for the others.
    if event != "subprocess.Popen":
        return
    owner = _OWNER.get()
    if owner is None:
        return
    owner.starting()
    # Raised from Popen._execute_child before the process starts: its ``self`` gets the pid.
    popen = sys._getframe(1).f_locals.get("self")
    if isinstance(popen, subprocess.Popen):
        owner.popens.append(popen)


def _track_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Wrap ``loop``'s process starters so the calling task's owner learns the pid."""
    for name in ("subprocess_exec", "subprocess_shell"):
        original = getattr(loop, name)

        async def start(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            owner = _OWNER.get()
            if owner is not None:
                owner.starting()
            transport, protocol = await _original(*args, **kwargs)
            pid = transport.get_pid()
            if owner is not None and (process := _process(pid)) is not None:
                owner.started[pid] = process
            return transport, protocol

        try:
            setattr(loop, name, start)
        except AttributeError:  # a loop class without instance attributes
            log.warning("cannot track processes started on %s", type(loop).__name__)
            return


# ----------------------------------------------------------------- /proc


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, start time) of ``pid`` from ``/proc/<pid>/stat``; None when it is gone."""
    try:
        with open(f"{_PROC}/{pid}/stat", encoding="ascii", errors="replace") as stat:
            text = stat.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ')'.
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[19])


def _process(pid: int) -> Process | None:
    found = _stat(pid)
    if found is None or found[0] in "ZX":
        return None
    return Process(pid, found[2])


def _with_descendants(processes: list[Process]) -> list[Process]:
    """``processes`` and every process below them now (one pass over ``/proc``)."""
    if not processes:
        return []
    children: dict[int, list[Process]] = {}
    for entry in os.listdir(_PROC):
        if entry.isdigit() and (found := _stat(int(entry))) is not None and found[0] not in "ZX":
            children.setdefault(found[1], []).append(Process(int(entry), found[2]))
    result: dict[int, Process] = {}
    todo = [p for p in processes if p.alive()]
    while todo:
        process = todo.pop()
        if process.pid not in result:
            result[process.pid] = process
            todo.extend(children.get(process.pid, []))
    return list(result.values())


def _signal(processes: list[Process], signum: signal.Signals) -> None:
    for process in processes:
        if process.alive():  # the start time guards a pid the kernel has reused
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(process.pid, signum)


def _pids(processes: list[Process]) -> str:
    return ", ".join(str(p.pid) for p in processes)
