"""RFC 9457 ``application/problem+json`` for every error the API returns.

Each error body has ``type``, ``title``, ``status``, ``detail`` and
``instance`` (the request path); Plait adds fields where they help, such as
``errors`` (spec issues or request validation errors). The LangGraph SDK shows
``detail`` to its users, so ``detail`` always says what went wrong and how to
fix it. Unexpected exceptions become a 500 with no traceback in the body; the
traceback goes to the log.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope

from plait.engine.run import RunRejected, ThreadSpecMismatch
from plait.engine.spec import SpecError, SpecIssue
from plait.server.approvals.records import ApprovalClosed, ApprovalNotFound, InvalidDecision
from plait.server.auth.keys import Forbidden, Unauthenticated
from plait.server.graphs.rollouts import RolloutInvalid, RolloutNoCanary, RolloutNotFound
from plait.server.graphs.spec_checks import SpecCheckFailed, SpecChecksBusy
from plait.server.graphs.versions import VersionConflict
from plait.server.queue.runs import (
    IdempotencyMismatch,
    RunActive,
    RunNotDeadLettered,
    RunNotFound,
    ThreadBusy,
)
from plait.server.queue.threads import ThreadExists, ThreadNotFound

logger = logging.getLogger("plait.server")

MEDIA_TYPE = "application/problem+json"
_TYPE_PREFIX = "urn:plait:problem:"

#: Exceptions of the queue and registry -> (status, problem kind, title); their
#: messages already say what happened and what to do, so they are the detail.
_MAPPED: dict[type[Exception], tuple[int, str, str]] = {
    Unauthenticated: (401, "unauthenticated", "Unauthenticated"),
    Forbidden: (403, "forbidden", "Forbidden"),
    ThreadBusy: (409, "thread-busy", "Thread busy"),
    RunActive: (409, "run-active", "Run still active"),
    RunNotDeadLettered: (409, "run-not-dead-lettered", "Run not dead-lettered"),
    ThreadExists: (409, "thread-exists", "Thread exists"),
    ThreadSpecMismatch: (409, "thread-spec-mismatch", "Thread runs another spec"),
    VersionConflict: (409, "version-conflict", "Version already published"),
    RolloutInvalid: (422, "rollout-invalid", "Invalid rollout"),
    RolloutNotFound: (404, "not-found", "Not found"),
    RolloutNoCanary: (409, "rollout-no-canary", "Rollout has no canary"),
    IdempotencyMismatch: (422, "idempotency-key-reused", "Idempotency key reused"),
    ThreadNotFound: (404, "not-found", "Not found"),
    RunNotFound: (404, "not-found", "Not found"),
    ApprovalNotFound: (404, "not-found", "Not found"),
    ApprovalClosed: (409, "approval-closed", "Approval already closed"),
    InvalidDecision: (422, "decision-invalid", "Invalid decision"),
    RunRejected: (422, "input-invalid", "Invalid run input"),
    SpecChecksBusy: (503, "busy", "Server busy"),
    SpecCheckFailed: (500, "internal", "Internal server error"),
    # A backstop: request_limits.py refuses what Postgres cannot store at the edge.
    psycopg.DataError: (422, "request-invalid", "Invalid value"),
}


class Problem(Exception):
    """An error the API reports as problem+json.

    ``kind`` names the problem type (``urn:plait:problem:<kind>``); without it
    the type is ``about:blank`` and the title is the HTTP status phrase, as RFC
    9457 asks for problems that are just an HTTP status.
    """

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        kind: str | None = None,
        title: str | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.kind = kind
        self.title = title
        self.headers = headers
        self.extra = extra


def not_found(what: str, detail: str | None = None) -> Problem:
    """A 404 for a missing resource (``what`` like ``"thread 1234"``)."""
    return Problem(404, detail or f"{what} not found", kind="not-found", title="Not found")


def spec_invalid(issues: Sequence[SpecIssue], detail: str | None = None) -> Problem:
    """A 422 carrying spec issues exactly as ``plait validate --format json`` prints them."""
    errors = [issue for issue in issues if issue.severity == "error"]
    first = errors[0].format() if errors else "the spec is invalid"
    return Problem(
        422,
        detail or f"{len(errors)} error(s) in the spec; first: {first}",
        kind="spec-invalid",
        title="Invalid spec",
        errors=[issue.to_dict() for issue in issues],
    )


def problem_response(request: Request, problem: Problem) -> JSONResponse:
    """The problem+json response for ``problem`` raised while serving ``request``."""
    return _response(request.url.path, problem)


def problem_asgi_response(scope: Scope, problem: Problem) -> JSONResponse:
    """The same for ASGI middleware, which answers before any ``Request`` exists."""
    return _response(str(scope.get("path", "")), problem)


def _response(path: str, problem: Problem) -> JSONResponse:
    body: dict[str, Any] = {
        "type": _TYPE_PREFIX + problem.kind if problem.kind else "about:blank",
        "title": problem.title or _phrase(problem.status),
        "status": problem.status,
        "detail": problem.detail,
        "instance": path,
        **jsonable_encoder(problem.extra),
    }
    return JSONResponse(
        body, status_code=problem.status, headers=problem.headers, media_type=MEDIA_TYPE
    )


def install(app: FastAPI) -> None:
    """Register the handlers that turn every error into problem+json."""
    app.add_exception_handler(Problem, _on_problem)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _on_http)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _on_validation)  # type: ignore[arg-type]
    app.add_exception_handler(SpecError, _on_spec_error)  # type: ignore[arg-type]
    for kind in _MAPPED:
        app.add_exception_handler(kind, _on_mapped)
    # Handled by Starlette's outermost middleware, so it also catches errors
    # raised by other middleware; the exception is still re-raised to the server.
    app.add_exception_handler(Exception, _on_unexpected)


async def _on_problem(request: Request, exc: Problem) -> JSONResponse:
    return problem_response(request, exc)


async def _on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    detail = exc.detail if isinstance(exc.detail, str) else _phrase(exc.status_code)
    if exc.status_code == 404 and detail == "Not Found":
        detail = f"no route {request.method} {request.url.path}"
    elif exc.status_code == 405:
        detail = f"{request.method} is not allowed on {request.url.path}"
    headers = dict(exc.headers) if exc.headers else None
    return problem_response(request, Problem(exc.status_code, detail, headers=headers))


async def _on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = [
        {"loc": list(error.get("loc", ())), "msg": error.get("msg"), "type": error.get("type")}
        for error in exc.errors()
    ]
    described = "; ".join(f"{_where(error['loc'])}: {error['msg']}" for error in errors[:3])
    problem = Problem(
        422,
        f"invalid request: {described}" if described else "invalid request",
        kind="request-invalid",
        title="Invalid request",
        errors=errors,
    )
    return problem_response(request, problem)


async def _on_spec_error(request: Request, exc: SpecError) -> JSONResponse:
    return problem_response(request, spec_invalid(exc.issues))


async def _on_mapped(request: Request, exc: Exception) -> JSONResponse:
    # Registered only for the classes of _MAPPED, so one of them matches.
    status, name, title = next(v for k, v in _MAPPED.items() if isinstance(exc, k))
    retry_after = getattr(exc, "retry_after", None)
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    problem = Problem(status, str(exc), kind=name, title=title, headers=headers)
    return problem_response(request, problem)


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("unexpected error on %s %s", request.method, request.url.path)
    problem = Problem(
        500,
        f"internal error ({type(exc).__name__}); the server log has the details",
        kind="internal",
        title="Internal server error",
    )
    return problem_response(request, problem)


def _where(loc: Sequence[Any]) -> str:
    return ".".join(str(part) for part in loc) or "request"


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"
