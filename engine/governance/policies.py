"""Per-step policies of a compiled node: which errors are retried, and how."""

from __future__ import annotations

import jsonschema
import pydantic
from langgraph.types import RetryPolicy

from plait.engine.errors import NodeError
from plait.engine.governance.breakers import CircuitOpen
from plait.engine.governance.secrets import SecretMissing
from plait.engine.spec.expressions import ExpressionError
from plait.engine.spec.models import RetrySpec, duration_seconds

#: Errors that say the spec or the code is wrong: running again cannot help.
_PERMANENT: tuple[type[BaseException], ...] = (
    CircuitOpen,  # fail fast: retrying is what an open breaker prevents
    ExpressionError,
    SecretMissing,  # granted by an operator, not by waiting
    jsonschema.ValidationError,
    pydantic.ValidationError,
    TypeError,
    NameError,
    AttributeError,
    ImportError,
    SyntaxError,
    NotImplementedError,
)


def is_transient(exc: Exception) -> bool:
    """Whether a failed node attempt is worth retrying.

    Unlike LangGraph's default (which refuses ``ValueError``, ``RuntimeError``,
    ``OSError``...), user code and providers raise those for flaky services, so
    everything is retried except Plait's own deterministic errors and
    programming errors.
    """
    if isinstance(exc, NodeError):
        return exc.transient
    return not isinstance(exc, _PERMANENT)


def retry_policy(spec: RetrySpec) -> RetryPolicy:
    """The LangGraph ``RetryPolicy`` for a node's ``retry`` block."""
    return RetryPolicy(
        initial_interval=duration_seconds(spec.initial_interval),
        backoff_factor=spec.backoff,
        max_interval=duration_seconds(spec.max_interval),
        max_attempts=spec.max_attempts,
        jitter=spec.jitter,
        retry_on=is_transient,
    )
