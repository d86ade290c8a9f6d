"""Fixtures of the tenant tests: a database of their own (claims take any tenant's runs)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.store.migrate import migrate
from engine.store.pool import Pool, open_pool
from server import registry
from tests.conftest import fresh_database

SPECS_DIR = Path(__file__).parent / "specs"
WAIT_SECONDS = 60.0
#: How often a wait re-checks its condition (bounded polls, never a fixed delay).
POLL_SECONDS = 0.02


def unique(prefix: str) -> str:
    """A fresh id (tenant ids allow ``[a-z0-9_-]``)."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="package")
def tenants_database_url(postgres_server_url: str) -> Iterator[str]:
    """A database for these tests only."""
    with fresh_database(postgres_server_url) as url:
        yield url


@pytest.fixture(scope="package")
async def tpool(tenants_database_url: str) -> AsyncIterator[Pool]:
    """A migrated pool on the package's database, with the test specs registered."""
    async with await open_pool(tenants_database_url, max_size=20) as opened:
        await migrate(opened)
        issues = await registry.sync_folder(opened, SPECS_DIR)
        assert [issue for issue in issues if issue.severity == "error"] == []
        yield opened


async def until(check: Callable[[], Awaitable[Any]], what: str, limit: float = WAIT_SECONDS) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {limit:g}s waiting for {what}")
        await asyncio.sleep(POLL_SECONDS)
