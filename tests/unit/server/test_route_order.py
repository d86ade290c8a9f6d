"""The run routes are matched first, and no other route loses a request to them.

FastAPI tries the app's routers in order, a regex per route, for every request:
the run routes, which every run and resume goes through, come first after health
and metrics (server/app.py). /docs keeps its order of tags.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi import FastAPI
from starlette.routing import Match

from plait.server.api import runs
from plait.server.app import create_app
from plait.server.settings import Settings
from tests.unit.server.routes import api_routes


@pytest.fixture(scope="module")
def app() -> FastAPI:
    return create_app(Settings.from_env())


def _scope(method: str, path: str) -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "root_path": "", "headers": []}


def _first_match(app: FastAPI, method: str, path: str) -> int:
    """The index of the app's top-level route (or router) that takes the request."""
    for index, route in enumerate(app.router.routes):
        if route.matches(_scope(method, path))[0] == Match.FULL:
            return index
    raise AssertionError(f"no route takes {method} {path}")


def test_a_run_s_stream_is_taken_by_the_first_router_after_health_and_metrics(
    app: FastAPI,
) -> None:
    taken = _first_match(app, "POST", "/threads/t1/runs/stream")
    assert taken == _first_match(app, "GET", "/metrics") + 1
    assert getattr(app.router.routes[taken], "original_router", None) is runs.router


def test_no_path_of_another_router_is_a_run_route_s(app: FastAPI) -> None:
    """Every route's path, its parameters filled with a word any route spells out
    (``stream``, ``search``...), is matched by no run route unless it is one."""
    run_routes = list(api_routes(runs.router.routes))
    words = ("x", "stream", "wait", "search", "crons", "batch", "count", "history", "state")
    for route in api_routes(app.router.routes):
        if route in run_routes:
            continue
        for method in route.methods:
            for word in words:
                path = re.sub(r"\{[^}]+\}", word, route.path)
                taken = [
                    own.path
                    for own in run_routes
                    if own.matches(_scope(method, path))[0] == Match.FULL
                ]
                assert taken == [], f"{method} {path} ({route.path}) is taken by {taken}"


def test_the_docs_keep_their_order_of_tags(app: FastAPI) -> None:
    """/docs groups operations by tag: the declared tags first, then in order of appearance."""
    schema = app.openapi()
    order = [tag["name"] for tag in schema.get("tags", [])]
    for operations in schema["paths"].values():
        for operation in operations.values():
            order += [tag for tag in operation.get("tags", []) if tag not in order]
    assert order[:6] == ["health", "assistants", "threads", "state", "crons", "runs"]
