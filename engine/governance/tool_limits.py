"""Caps and rate limits of tools and MCP servers, across all runs and workers (``limits``).

A tool's ``limits`` (and its MCP server's) hold every call of it, in every run
and worker of the tenant, to at most ``concurrency`` calls in flight and
``rate`` calls per second, minute or hour. The counts live in Postgres
(:mod:`plait.engine.store.tool_limits`), so two workers share them exactly.
A call over a limit waits its turn, up to ``wait``, then fails with
:class:`ToolLimitTimeout` naming the tool and the limit. An error carrying a
``Retry-After`` (a 429 or 503: :class:`~plait.engine.governance.retries.RateLimited`,
an MCP error result's ``retry_after``, an HTTP response's header) pauses the
tool for everyone until then.

Each attempt of a call (retries included) takes its turn again. While a call
waits, the run's custom stream gets ``{"plait": "tool_waiting", "node", "tool",
"key", "reason", "limit", "retry_in"}`` (again when what holds it changes),
and observers get :meth:`~plait.engine.observability.observe.Observer.tool_waited`.

A run's config carries the :class:`ToolLimiter` (the server's workers and
``plait run`` make one on their pool, for the run's tenant); without one,
limits are not enforced (a graph compiled and invoked by a program of its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import logging
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import psycopg
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from plait.engine.errors import NodeError
from plait.engine.governance.audit import run_id_of
from plait.engine.observability import observe
from plait.engine.observability.emit import emit
from plait.engine.spec.models import CallLimitsSpec, duration_seconds, rate_per_second
from plait.engine.store import tool_limits as store
from plait.engine.store.pool import Pool
from plait.engine.store.tool_limits import KeyLimit, Turn

T = TypeVar("T")
log = logging.getLogger(__name__)

#: Where a run's config carries its :class:`ToolLimiter` (absent: limits are not enforced).
LIMITER_KEY = "plait_tool_limiter"
#: Where a tool carries its :class:`ToolLimits` (``BaseTool.metadata``).
TOOL_LIMITS_KEY = "plait_tool_limits"
#: How long a slot is held without its process renewing it (a killed worker's slot frees
#: itself after this); renewed every third of it.
LEASE_SECONDS = 30.0
#: Waiting for a slot polls (a release has no known time): from this, growing, to the cap.
_POLL_FIRST, _POLL_CAP = 0.02, 0.2
#: A paused call looks again this often (``POST /tool-limits/resume`` may end the pause early).
_PAUSE_RECHECK = 1.0
#: The longest pause a ``Retry-After`` may set: a wrong header must not stop a tool for days.
MAX_PAUSE_SECONDS = 3600.0


@dataclass(frozen=True)
class ToolLimits:
    """What a tool's calls are held to: a limit per key (the tool, its MCP server), sorted."""

    limits: tuple[KeyLimit, ...]
    #: How long a call may wait for its turn: the shortest ``wait`` declared.
    wait: float
    #: Where each key's limit is declared (``spec.tools.search``), for error messages.
    declared_at: Mapping[str, str]


def key_limit(key: str, spec: CallLimitsSpec) -> KeyLimit:
    """The limit ``spec`` declares for ``key``."""
    interval = 1.0 / rate_per_second(spec.rate) if spec.rate is not None else None
    return KeyLimit(key, spec.concurrency, spec.rate, interval, spec.burst)


def tool_limits(declared: Mapping[str, tuple[str, CallLimitsSpec | None]]) -> ToolLimits | None:
    """The limits of a tool from ``{key: (where declared, limits or None)}``; ``None`` if none."""
    found = {key: (where, spec) for key, (where, spec) in declared.items() if spec is not None}
    if not found:
        return None
    return ToolLimits(
        limits=tuple(key_limit(key, spec) for key, (_, spec) in sorted(found.items())),
        wait=min(duration_seconds(spec.wait) for _, spec in found.values()),
        declared_at={key: where for key, (where, _) in found.items()},
    )


def with_tool_limits(tool: BaseTool, limits: ToolLimits | None) -> BaseTool:
    """Attach ``limits`` to ``tool`` (nothing when ``None``)."""
    if limits is not None:
        tool.metadata = {**(tool.metadata or {}), TOOL_LIMITS_KEY: limits}
    return tool


class ToolLimitTimeout(NodeError):
    """A call waited ``wait`` for its turn under a tool's limits and did not get it."""

    def __init__(self, node: str, tool: str, turn: Turn, limits: ToolLimits, waited: float):
        key = turn.key or ""
        where = limits.declared_at.get(key, "the tool")
        if turn.set_by == "operator":
            where = f"the operator's cap (POST /tool-limits/caps), tighter than {where}.limits"
        else:
            where = f"{where}.limits"
        super().__init__(
            node,
            f"tool {tool!r} waited {waited:.1f}s for its turn (limits.wait={limits.wait:g}s): "
            f"{_why(turn)}, shared by every run and worker ({where}, key {key!r}); "
            "raise `wait` or the limit, or start fewer calls at once",
            transient=True,
        )
        self.tool = tool
        self.reason = turn.reason
        self.key = key


def _why(turn: Turn) -> str:
    if turn.reason == "concurrency":
        return f"all {turn.held_by} slots (concurrency) stayed busy"
    if turn.reason == "rate":
        return f"the rate {turn.held_by} left no turn in time"
    # A 429 or a person (POST /tool-limits/pause) paused it: the turn does not say which.
    return f"the tool is paused for {turn.wait_seconds or 0:.1f}s more"


def retry_after_of(exc: BaseException) -> float | None:
    """Seconds a rate-limited (429) or unavailable (503) callee asked to be left alone, if any.

    Read from the error's ``retry_after`` (:class:`RateLimited`, an MCP error result)
    or its HTTP response's ``Retry-After`` header (seconds or an HTTP date).
    """
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    if status is None:
        status = getattr(response, "status_code", None)
    named = {cls.__name__ for cls in type(exc).__mro__}
    if status not in (429, 503) and "RateLimited" not in named:
        return None
    value = getattr(exc, "retry_after", None)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    headers = getattr(response, "headers", None)
    header = headers.get("retry-after") if headers is not None else None
    if not isinstance(header, str):
        return None
    if header.strip().isdigit():
        return float(header.strip())
    try:
        when = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    return (when - datetime.now(UTC)).total_seconds()


class ToolLimiter:
    """Takes turns for one tenant's tool calls in Postgres (one per worker or ``plait run``)."""

    def __init__(self, pool: Pool, tenant: str, *, lease_seconds: float = LEASE_SECONDS) -> None:
        self.pool = pool
        self.tenant = tenant
        self.lease_seconds = lease_seconds

    @contextlib.asynccontextmanager
    async def turn(
        self, tool: str, limits: ToolLimits, *, node: str, run_id: str | None
    ) -> AsyncIterator[None]:
        """Wait for the call's turn (up to ``limits.wait``) and hold its slots while it runs."""
        call_id = str(uuid.uuid4())
        try:
            await self._wait(call_id, tool, limits, node=node, run_id=run_id)
            # Renewed whatever the spec declares: an operator's cap may make it hold a slot.
            renewing = asyncio.create_task(self._renew(call_id))
            try:
                yield
            finally:
                renewing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await renewing
        finally:
            # Also after a cancel: a slot (or a waiting row) must not wait for its lease.
            await asyncio.shield(store.release(self.pool, call_id))

    async def _wait(
        self, call_id: str, tool: str, limits: ToolLimits, *, node: str, run_id: str | None
    ) -> None:
        started = time.monotonic()
        deadline = started + limits.wait
        poll = _POLL_FIRST
        announced: tuple[str | None, str | None] | None = None
        while True:
            turn = await store.take(
                self.pool,
                call_id,
                self.tenant,
                limits.limits,
                tool=tool,
                run_id=run_id,
                node=node,
                lease_seconds=self.lease_seconds,
            )
            now = time.monotonic()
            if turn.granted:
                if announced is not None:
                    observe.tool_waited(tool, announced[0] or "", now - started, granted=True)
                return
            if (turn.reason, turn.key) != announced:
                announced = (turn.reason, turn.key)
                _announce(node, tool, turn, limits)
            if turn.wait_seconds is not None:
                # The database said when the next token or the pause's end is; known to be
                # past the deadline, the call fails now rather than sleep for nothing.
                delay = max(turn.wait_seconds, 0.001)
                late = now + delay > deadline
                if turn.reason == "paused":
                    delay = min(delay, _PAUSE_RECHECK)  # a person may resume the tool sooner
            else:
                # A slot frees when a call ends, at no known time: poll until the deadline.
                delay = min(poll * random.uniform(0.5, 1.0), deadline - now)
                poll = min(poll * 1.5, _POLL_CAP)
                late = now >= deadline
            if late:
                observe.tool_waited(tool, turn.reason or "", now - started, granted=False)
                raise ToolLimitTimeout(node, tool, turn, limits, now - started)
            await asyncio.sleep(delay)

    async def _renew(self, call_id: str) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                await store.renew(self.pool, call_id, self.lease_seconds)
            except psycopg.Error as exc:
                # Two more tries before the lease runs out; then the slot is counted free
                # while the call still runs (one call over the cap), never leaked.
                log.warning("could not renew the slot of a tool call: %s", exc)

    async def pause(self, limits: ToolLimits, seconds: float, reason: str) -> None:
        """Pause every key of ``limits`` for ``seconds`` (capped at :data:`MAX_PAUSE_SECONDS`)."""
        keys = [limit.key for limit in limits.limits]
        await store.pause(self.pool, self.tenant, keys, min(seconds, MAX_PAUSE_SECONDS), reason)


def _announce(node: str, tool: str, turn: Turn, limits: ToolLimits) -> None:
    shown: dict[str, Any] = {}
    if turn.reason == "concurrency" and turn.held_by is not None:
        shown = {"concurrency": int(turn.held_by), "set_by": turn.set_by}
    elif turn.reason == "rate":
        shown = {"rate": turn.held_by, "set_by": turn.set_by}
    event: dict[str, Any] = {
        "plait": "tool_waiting",
        "node": node,
        "tool": tool,
        "key": turn.key,
        "reason": turn.reason,
        "limit": shown,
        "wait": limits.wait,
    }
    if turn.wait_seconds is not None:
        event["retry_in"] = round(turn.wait_seconds, 3)
    emit(event)


def limiter_of(config: RunnableConfig) -> ToolLimiter | None:
    """The run's limiter, if it has one."""
    found = (config.get("configurable") or {}).get(LIMITER_KEY)
    return found if isinstance(found, ToolLimiter) else None


Attempt = Callable[[Callable[[], Awaitable[T]]], Awaitable[T]]


def limits_gate(tool: BaseTool, config: RunnableConfig, node: str) -> Attempt[Any] | None:
    """What wraps each attempt of a call of ``tool``: its turn, and a pause on a Retry-After.

    ``None`` when the tool declares no limits or the run has no limiter.
    """
    limits = (tool.metadata or {}).get(TOOL_LIMITS_KEY)
    limiter = limiter_of(config)
    if not isinstance(limits, ToolLimits) or limiter is None:
        return None
    run_id = run_id_of(config)

    async def gated(attempt: Callable[[], Awaitable[Any]]) -> Any:
        async with limiter.turn(tool.name, limits, node=node, run_id=run_id):
            try:
                return await attempt()
            except Exception as exc:
                seconds = retry_after_of(exc)
                if seconds is not None and seconds > 0:
                    reason = f"{type(exc).__name__}: {exc}"
                    await asyncio.shield(limiter.pause(limits, seconds, reason))
                raise

    return gated
