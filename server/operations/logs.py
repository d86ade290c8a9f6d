"""Structured logs: JSON lines (python-json-logger) with the run's ids on every line.

Every record gets the fields of the :func:`log_context` it is logged in (the
executor sets ``run_id``, ``thread_id``, ``graph``, ``tenant`` and
``trace_id`` for the whole run, and node tasks inherit them), the current
OpenTelemetry ``trace_id`` / ``span_id`` when a span is recording, and the
``plait_<field>`` extras the engine passes (``node``, ``tool``, ``status``,
``error_code``), under their short names, and ``agent_role``: the agent of the
team a line was logged for (``plait.engine.observability.roles``).

``PLAIT_LOG_FORMAT`` picks ``json`` or ``text``; unset, it is ``json`` unless
stderr is a terminal. ``PLAIT_LOG_LEVEL`` sets the level (default ``INFO``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

from opentelemetry import trace
from pythonjsonlogger.orjson import OrjsonFormatter

from plait.engine.observability import agent_role
from plait.engine.store import EMBEDDED_LOGGER

FORMAT_ENV = "PLAIT_LOG_FORMAT"
LEVEL_ENV = "PLAIT_LOG_LEVEL"

#: The fields a line may carry besides time, level, logger and message.
FIELDS = (
    "run_id",
    "thread_id",
    "trace_id",
    "span_id",
    "tenant",
    "graph",
    "node",
    "agent_role",
    "tool",
    "status",
    "error_code",
)

_CONTEXT: ContextVar[Mapping[str, Any] | None] = ContextVar("plait_log_context", default=None)


@contextlib.contextmanager
def log_context(**fields: Any) -> Iterator[None]:
    """Add ``fields`` (``None`` values skipped) to every line logged inside the block."""
    added = {key: value for key, value in fields.items() if value is not None}
    token = _CONTEXT.set({**(_CONTEXT.get() or {}), **added})
    try:
        yield
    finally:
        _CONTEXT.reset(token)


#: Each engine extra's record attribute and the field it becomes.
_EXTRAS = tuple((f"plait_{name}", name) for name in FIELDS)


class ContextFilter(logging.Filter):
    """Puts the context's fields, the current span and ``plait_*`` extras on each record."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Annotate ``record`` (never drops it)."""
        attributes = record.__dict__
        attributes.update(_CONTEXT.get() or ())
        role = agent_role()
        if role is not None:
            attributes["agent_role"] = role
        span = trace.get_current_span().get_span_context()
        if span.is_valid:
            attributes["trace_id"] = f"{span.trace_id:032x}"
            attributes["span_id"] = f"{span.span_id:016x}"
        for extra, name in _EXTRAS:
            if extra in attributes:
                value = attributes.pop(extra)
                if value is not None:
                    attributes[name] = value
        return True


class _JsonFormatter(OrjsonFormatter):
    """JSON lines (orjson: the server writes a few per run) without uvicorn's coloured copy."""

    def add_fields(
        self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]
    ) -> None:
        super().add_fields(log_data, record, message_dict)
        log_data.pop("color_message", None)


class _TextFormatter(logging.Formatter):
    """``time level logger: message`` and the line's fields as ``name=value``."""

    def format(self, record: logging.LogRecord) -> str:
        attributes = record.__dict__
        record.plait_fields = " ".join(
            f"{name}={attributes[name]}" for name in FIELDS if attributes.get(name) is not None
        )
        return super().format(record)


def log_format(env: Mapping[str, str] | None = None, stream: Any = None) -> str:
    """``json`` or ``text``: ``PLAIT_LOG_FORMAT``, else text on a terminal and JSON elsewhere."""
    env = os.environ if env is None else env
    chosen = env.get(FORMAT_ENV, "").strip().lower()
    if chosen in ("json", "text"):
        return chosen
    stream = sys.stderr if stream is None else stream
    return "text" if getattr(stream, "isatty", lambda: False)() else "json"


def make_handler(fmt: str, stream: Any = None) -> logging.Handler:
    """A stream handler (default stderr) writing ``fmt`` (``json`` or ``text``) lines."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    if fmt == "json":
        handler.setFormatter(
            _JsonFormatter(
                "{asctime}{levelname}{name}{message}",
                style="{",
                rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
                datefmt="%Y-%m-%dT%H:%M:%S%z",
            )
        )
    else:
        handler.setFormatter(
            _TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s %(plait_fields)s")
        )
    handler.addFilter(ContextFilter())
    return handler


def configure_logging(
    fmt: str | None = None, level: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    """Send every logger (Plait's, uvicorn's, libraries') to stderr as ``fmt``; return it.

    Replaces the root logger's handlers, so calling it twice does not double lines.
    ``level`` (else ``PLAIT_LOG_LEVEL``, else ``INFO``) must be a level name:
    :class:`ValueError` says which names are.
    """
    env = os.environ if env is None else env
    chosen = fmt or log_format(env)
    level_name = (level or env.get(LEVEL_ENV) or "INFO").strip().upper()
    if not isinstance(logging.getLevelName(level_name), int):
        raise ValueError(
            f"unknown log level {level_name!r} (--log-level or {LEVEL_ENV}); "
            "use DEBUG, INFO, WARNING, ERROR or CRITICAL"
        )
    # What no line shows is not gathered for each record (the logging HOWTO's
    # "Optimization"): the calling frame, the thread and the process.
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    if sys.version_info >= (3, 12):
        logging.logAsyncioTasks = False
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(make_handler(chosen))
    root.setLevel(level_name)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        # uvicorn's own handlers would print a second, unstructured copy.
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
    # The embedded server's initdb and pg_ctl command lines are for debugging
    # it; Plait logs one line of its own when it starts one.
    embedded = logging.getLogger(EMBEDDED_LOGGER)
    embedded.setLevel(logging.NOTSET if level_name == "DEBUG" else logging.WARNING)
    return chosen
