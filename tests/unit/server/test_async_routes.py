"""No request waits for FastAPI's thread pool: every route and dependency is ``async``.

FastAPI calls a plain ``def`` endpoint or dependency in a worker thread. On a
loaded server that thread needs the GIL from a loop busy with running graphs
(Python hands it over every 5 ms), so one such dependency on the run routes
held each new stream's first event back by about 9 ms at 10 runs at once
(bench/README.md, "Throughput as concurrency rises").
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

from fastapi.dependencies.models import Dependant

from plait.server.app import create_app
from plait.server.settings import Settings
from tests.unit.server.routes import api_routes


def _sync_calls(dependant: Dependant) -> Iterator[Callable[..., Any]]:
    """The dependencies under ``dependant`` that FastAPI would run in a thread."""
    for dependency in dependant.dependencies:
        call = dependency.call
        if call is not None:
            function = call if inspect.isroutine(call) else type(call).__call__
            if not (inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)):
                yield call
        yield from _sync_calls(dependency)


def test_every_route_and_dependency_runs_on_the_loop() -> None:
    app = create_app(Settings.from_env())
    routes = list(api_routes(app.routes))
    operations = {
        (method.upper(), path) for path, item in app.openapi()["paths"].items() for method in item
    }
    walked = {(method, route.path_format) for route in routes for method in route.methods}
    # The walk reaches every documented operation (else it could pass by seeing nothing).
    assert operations <= walked, sorted(operations - walked)[:5]

    threaded = [
        f"{route.path}: {getattr(call, '__qualname__', repr(call))}"
        for route in routes
        for call in _sync_calls(route.dependant)
    ]
    threaded += [
        f"{route.path}: endpoint {route.endpoint.__qualname__}"
        for route in routes
        if not inspect.iscoroutinefunction(route.endpoint)
    ]
    assert threaded == [], "make these `async def` (they do no blocking work):\n" + "\n".join(
        threaded
    )
