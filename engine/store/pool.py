"""Async psycopg connection pools configured the way LangGraph's Postgres saver needs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from psycopg import AsyncConnection
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

Pool: TypeAlias = AsyncConnectionPool[AsyncConnection[DictRow]]


async def open_pool(
    url: str,
    *,
    min_size: int = 1,
    max_size: int = 10,
    wait_seconds: float = 30.0,
    settings: Mapping[str, str] | None = None,
) -> Pool:
    """Open a pool on ``url`` and wait until its first connection works.

    Connections use the settings langgraph-checkpoint-postgres documents:
    autocommit (its ``setup()`` needs it), ``prepare_threshold=0`` and dict rows.
    ``settings`` are server settings for every session (sent as ``-c name=value``
    options, after any the URL has). The pool is already open; it is also an
    async context manager that closes it: ``async with await open_pool(url) as pool: ...``.
    """
    kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    if settings:
        given = conninfo_to_dict(url).get("options")
        added = " ".join(f"-c {name}={value}" for name, value in settings.items())
        kwargs["options"] = f"{given} {added}" if given else added
    pool: Pool = AsyncConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        kwargs=kwargs,
        connection_class=AsyncConnection[DictRow],
        # Opened explicitly below: opening in the constructor is deprecated in psycopg_pool.
        open=False,
    )
    try:
        await pool.open(wait=True, timeout=wait_seconds)
    except BaseException:
        await pool.close()
        raise
    return pool
