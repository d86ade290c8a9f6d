"""Health and server info: ``/ok``, ``/healthz``, ``/readyz``, ``/info``."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from fastapi import APIRouter

from plait.engine.store import migrations
from plait.server.api.deps import Svc
from plait.server.http.problems import Problem

router = APIRouter(tags=["health"])


def plait_version() -> str:
    """The installed Plait version ("0+unknown" in a plain checkout)."""
    try:
        return version("plait")
    except PackageNotFoundError:
        return "0+unknown"


@router.get("/ok", summary="Liveness, as the Agent Server answers it")
async def ok() -> dict[str, bool]:
    """``{"ok": true}`` while the process serves requests."""
    return {"ok": True}


@router.get("/healthz", summary="Liveness")
async def healthz() -> dict[str, str]:
    """The process is up; says nothing about the database."""
    return {"status": "ok"}


@router.get("/readyz", summary="Readiness: database reachable and migrated")
async def readyz(services: Svc) -> dict[str, Any]:
    """200 when Postgres answers and every migration is applied, else a 503 problem."""
    expected = {migration.version for migration in migrations()}
    try:
        async with services.pool.connection(timeout=5) as conn:
            cursor = await conn.execute("SELECT version FROM plait_schema_migrations")
            applied = {row["version"] for row in await cursor.fetchall()}
    except Exception as exc:
        raise Problem(
            503, f"the database is not reachable: {type(exc).__name__}", kind="not-ready"
        ) from None
    missing = sorted(expected - applied)
    if missing:
        raise Problem(503, f"migrations not applied yet: {missing}", kind="not-ready")
    return {"status": "ready", "migrations": sorted(applied)}


@router.get("/info", summary="Server version and capabilities")
async def info(services: Svc) -> dict[str, Any]:
    """What the Agent Server's ``/info`` says (version, feature flags), plus Plait's settings."""
    return {
        "version": plait_version(),
        "flags": {"assistants": True, "crons": True, "langsmith": False, "store": True},
        "metadata": {"server": "plait"},
        "plait": {
            "workers": services.settings.workers,
        },
    }
