"""The API routes of an app or router, for the tests that check every route."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi.routing import APIRoute


def api_routes(routes: list[Any]) -> Iterator[APIRoute]:
    """Every API route below ``routes``, through included routers."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        included = getattr(route, "original_router", None)  # FastAPI's included router
        if included is not None:
            yield from api_routes(included.routes)
