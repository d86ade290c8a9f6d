"""Connecting ``plait`` to Postgres, with one clear message when that is not possible."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from plait.server.cli.exits import CliError, ExitCode

if TYPE_CHECKING:
    from plait.engine.store import Pool

CONNECT_TIMEOUT_SECONDS = 5


def redact(url: str) -> str:
    """``url`` without its password, safe to print."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


@asynccontextmanager
async def connected_pool() -> AsyncIterator[Pool]:
    """A migrated pool on Plait's database (``PLAIT_DATABASE_URL`` or the embedded server).

    Connects once directly first: a pool only reports a timeout, while a
    single connection attempt says *why* (refused, unknown host, bad password).
    """
    # Imported here: every command module imports this one, most never connect.
    import asyncio

    import psycopg

    from plait.engine.store import DATABASE_URL_ENV, database_url, migrate, open_pool

    try:
        # Starting the embedded server blocks for a second or two.
        url = await asyncio.to_thread(database_url)
    except Exception as exc:
        raise CliError(
            f"cannot start the embedded Postgres: {exc}; set {DATABASE_URL_ENV} to use "
            "another server",
            ExitCode.ENVIRONMENT,
        ) from None
    try:
        probe = await psycopg.AsyncConnection.connect(url, connect_timeout=CONNECT_TIMEOUT_SECONDS)
        await probe.close()
    except (psycopg.Error, OSError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise CliError(
            f"cannot connect to the database at {redact(url)}: {reason}; check that it is "
            f"running, or unset {DATABASE_URL_ENV} to use the embedded server",
            ExitCode.ENVIRONMENT,
        ) from None
    pool = await open_pool(url, min_size=1, max_size=4)
    async with pool:
        try:
            await migrate(pool)
        except psycopg.Error as exc:
            raise CliError(
                f"cannot migrate the database at {redact(url)}: {exc}", ExitCode.ENVIRONMENT
            ) from None
        yield pool
