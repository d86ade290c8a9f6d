"""Async psycopg connection pools configured the way LangGraph's Postgres saver needs."""

from __future__ import annotations

import json
from typing import Any, TypeAlias

import orjson
from psycopg import AsyncConnection
from psycopg.rows import DictRow, dict_row
from psycopg.types.json import set_json_dumps
from psycopg_pool import AsyncConnectionPool

from plait.engine.protected import protect

Pool: TypeAlias = AsyncConnectionPool[AsyncConnection[DictRow]]


async def open_pool(
    url: str, *, min_size: int = 1, max_size: int = 10, wait_seconds: float = 30.0
) -> Pool:
    """Open a pool on ``url`` and wait until its first connection works.

    Connections use the settings langgraph-checkpoint-postgres documents:
    autocommit (its ``setup()`` needs it), ``prepare_threshold=0`` and dict rows.
    ``Json`` and ``Jsonb`` parameters are written by :func:`dumps_json`.
    The pool is already open; it is also an async context manager that closes it:
    ``async with await open_pool(url) as pool: ...``. No spec of this process
    may read ``url`` as a secret (``plait.engine.protected.protect``).
    """
    protect(url)
    pool: Pool = AsyncConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        connection_class=AsyncConnection[DictRow],
        configure=_configure,
        # Opened explicitly below: opening in the constructor is deprecated in psycopg_pool.
        open=False,
    )
    try:
        await pool.open(wait=True, timeout=wait_seconds)
    except BaseException:
        await pool.close()
        raise
    return pool


def dumps_json(value: Any) -> bytes:
    """``value`` as JSON text: orjson, or the standard library for what orjson refuses
    (integers beyond 64 bits).

    psycopg writes ``Json``/``Jsonb`` parameters (a checkpoint, a run's kwargs) with the
    standard library's encoder by default: 1.5% of the server's CPU at 10 runs at once.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


async def _configure(conn: AsyncConnection[DictRow]) -> None:
    set_json_dumps(dumps_json, conn)
