"""Retries of single model and tool calls, by error class (``retry`` on models and tools).

Only errors that say "try again later" are retried: rate limits (HTTP 429, a
provider's ``RateLimitError``, :class:`RateLimited`), transient server errors
(5xx, :class:`TransientError`), timeouts and network errors. Validation and
permission errors, and anything unrecognised, fail at once: running the same
call again cannot fix them. Each retry is announced as
``{"plait": "retry", "target", "attempt", "error_class", "delay", "error"}``.

Retries happen inside the step, below a node's own ``retry`` (which reruns the
whole step).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import httpx
import jsonschema
import pydantic
from langchain_core.tools import BaseTool

from plait.engine.governance.breakers import CircuitOpen, breaker_for
from plait.engine.governance.tool_limits import Attempt, ToolLimitTimeout
from plait.engine.observability.emit import emit
from plait.engine.spec.models import (
    BreakerSpec,
    CallRetrySpec,
    RetrySpec,
    ToolDef,
    duration_seconds,
)

T = TypeVar("T")

ErrorClass = Literal[
    "rate_limit",
    "server_error",
    "timeout",
    "network",
    "validation",
    "permission",
    "circuit_open",
    "limit_wait",
    "other",
]

#: Classes worth another attempt of the same call.
RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server_error", "timeout", "network"})
#: Classes that say the callee is unwell (they count against its breaker).
UNHEALTHY: frozenset[str] = frozenset({"rate_limit", "server_error", "timeout", "network", "other"})


class RateLimited(Exception):
    """Raise from a tool when its service says "too many requests"; retried after a pause."""

    def __init__(self, message: str = "rate limited", *, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class TransientError(Exception):
    """Raise from a tool for a failure that may pass (a 503, a dropped connection)."""


def _status(exc: BaseException) -> int | None:
    """The HTTP status an error carries (openai/anthropic ``status_code``, httpx ``response``)."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _names(exc: BaseException) -> set[str]:
    # Providers' error classes are matched by name: importing every SDK to test
    # isinstance would make them all dependencies.
    return {cls.__name__ for cls in type(exc).__mro__}


def classify(exc: BaseException) -> ErrorClass:
    """The error class of a failed call."""
    names = _names(exc)
    status = _status(exc)
    if isinstance(exc, CircuitOpen):
        return "circuit_open"
    if isinstance(exc, ToolLimitTimeout):
        return "limit_wait"  # its own limits held it: no verdict on the callee, no retry
    if isinstance(exc, RateLimited) or status == 429 or "RateLimitError" in names:
        return "rate_limit"
    if (
        isinstance(exc, PermissionError)
        or status in (401, 403)
        or names & {"AuthenticationError", "PermissionDeniedError"}
    ):
        return "permission"
    if isinstance(exc, TransientError) or (status is not None and 500 <= status < 600):
        return "server_error"
    if isinstance(exc, TimeoutError | httpx.TimeoutException) or "APITimeoutError" in names:
        return "timeout"
    if isinstance(exc, ConnectionError | httpx.TransportError) or "APIConnectionError" in names:
        return "network"
    if isinstance(
        exc, pydantic.ValidationError | jsonschema.ValidationError | ValueError
    ) or status in (400, 404, 409, 422):
        return "validation"
    return "other"


def backoff_delay(spec: CallRetrySpec, attempt: int, exc: BaseException) -> float:
    """Seconds to wait after failed ``attempt`` (1-based): exponential, capped, jittered.

    Jitter keeps half the delay and randomises the rest, so callers that failed
    together do not come back together. A ``retry_after`` the error carries is
    honoured (up to ``max_interval``).
    """
    cap = duration_seconds(spec.max_interval)
    delay = min(cap, duration_seconds(spec.initial_interval) * spec.backoff ** (attempt - 1))
    if spec.jitter:
        delay = delay / 2 + random.uniform(0, delay / 2)
    retry_after = getattr(exc, "retry_after", None)
    if isinstance(retry_after, int | float) and retry_after > delay:
        delay = min(cap, float(retry_after))
    return round(delay, 4)


async def guarded_call(
    target: str,
    call: Callable[[], Awaitable[T]],
    *,
    retry: CallRetrySpec | None,
    breaker: BreakerSpec | None,
    breaker_key: str | None = None,
) -> T:
    """Run ``call`` through ``target``'s breaker, retrying the error classes that may pass.

    ``target`` names the callee in events (``model:<name>``, ``tool:<name>``);
    ``breaker_key`` identifies the endpoint the breaker protects (default: ``target``).
    """
    guard = breaker_for(breaker_key or target, breaker) if breaker is not None else None
    attempts = retry.max_attempts if retry is not None else 1
    attempt = 1
    while True:
        if guard is not None:
            guard.before_call(target)
        try:
            result = await call()
        except Exception as exc:
            error_class = classify(exc)
            if guard is not None:
                guard.after_call(target, ok=error_class not in UNHEALTHY)
            if retry is None or error_class not in RETRYABLE or attempt >= attempts:
                raise
            delay = backoff_delay(retry, attempt, exc)
            _emit_retry(target, attempt, error_class, delay, f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(delay)
            attempt += 1
            continue
        except BaseException:
            # Cancelled (a timeout, a cancelled run): no verdict on the callee.
            if guard is not None:
                guard.abandon()
            raise
        if guard is not None:
            guard.after_call(target, ok=True)
        return result


def _emit_retry(target: str, attempt: int, error_class: str, delay: float, error: str) -> None:
    emit(
        {
            "plait": "retry",
            "target": target,
            "attempt": attempt,
            "error_class": error_class,
            "delay": delay,
            "error": error[:300],
        }
    )


def emit_step_retry(node_id: str, spec: RetrySpec, attempt: int, exc: Exception) -> None:
    """Announce that LangGraph runs a failed step of ``node_id`` again (its ``retry``).

    Said before LangGraph waits, as a call's retry is, so a run's state shows
    it retrying while it backs off; the delay is LangGraph's without its jitter
    (up to a second more).
    """
    if attempt >= spec.max_attempts:
        return
    delay = min(
        duration_seconds(spec.max_interval),
        duration_seconds(spec.initial_interval) * spec.backoff ** (attempt - 1),
    )
    # A step's error arrives wrapped in a NodeError: its cause says what failed.
    cause = exc.__cause__ if isinstance(exc.__cause__, Exception) else exc
    error = f"{type(cause).__name__}: {cause}"
    _emit_retry(f"node:{node_id}", attempt, classify(cause), round(delay, 4), error)


def emit_repair(target: str, attempt: int, error: str) -> None:
    """Announce a repair: malformed output asked for again (no delay: nothing to wait for)."""
    _emit_retry(target, attempt, "malformed_output", 0.0, error)


def repair_prompt(error: str) -> str:
    """The message that asks a model to fix its reply, quoting what was wrong."""
    return (
        "Your previous reply could not be used: "
        f"{error}\nReply again with only the corrected output."
    )


#: Where a tool carries its ``retry`` and ``breaker`` (``BaseTool.metadata``).
CALL_POLICY_KEY = "plait_call_policy"


@dataclass(frozen=True)
class CallPolicy:
    """A tool's ``retry`` and ``breaker``, and the endpoint key of its breaker."""

    retry: CallRetrySpec | None
    breaker: BreakerSpec | None
    breaker_key: str


def with_call_policy(
    tool: BaseTool, definition: ToolDef, breaker_key: str | None = None
) -> BaseTool:
    """Attach ``definition``'s retry and breaker to ``tool`` (nothing when it declares neither).

    ``breaker_key`` is the endpoint the breaker protects (default: the python ``function``).
    """
    if definition.retry is None and definition.breaker is None:
        return tool
    key = breaker_key if breaker_key is not None else f"tool:{definition.function}"
    policy = CallPolicy(definition.retry, definition.breaker, key)
    tool.metadata = {**(tool.metadata or {}), CALL_POLICY_KEY: policy}
    return tool


async def invoke_tool(
    tool: BaseTool, args: dict[str, Any], *, gate: Attempt[Any] | None = None
) -> Any:
    """``tool.ainvoke(args)`` under the tool's breaker and retries, if it declares them.

    ``gate`` wraps each attempt (the tool's ``limits``: engine/governance/tool_limits.py),
    so a retry waits its turn again.
    """

    def attempt() -> Awaitable[Any]:
        return tool.ainvoke(args) if gate is None else gate(lambda: tool.ainvoke(args))

    policy = (tool.metadata or {}).get(CALL_POLICY_KEY)
    if not isinstance(policy, CallPolicy):
        return await attempt()
    return await guarded_call(
        f"tool:{tool.name}",
        attempt,
        retry=policy.retry,
        breaker=policy.breaker,
        breaker_key=policy.breaker_key,
    )
