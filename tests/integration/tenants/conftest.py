"""Fixtures of the tenant tests: a database of their own (claims take any tenant's runs)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from plait.engine.store.pool import Pool
from tests.conftest import fresh_database
from tests.integration.server.harness import registered_pool

SPECS_DIR = Path(__file__).parent / "specs"


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
    async with registered_pool(tenants_database_url, SPECS_DIR) as opened:
        yield opened
