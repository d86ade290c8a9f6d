"""A transaction whose statements and commit share round trips (psycopg pipeline mode).

psycopg's ``conn.transaction()`` inside ``conn.pipeline()`` syncs with the server
when it begins, when its block ends, when it commits and when the pipeline ends:
four round trips for a transaction that reads nothing before its commit, each
one a wait for the server and a wake-up of the event loop. Here ``BEGIN``, the
block's statements and ``COMMIT`` are sent together and the pipeline's end is
the only sync: one round trip, plus one for each result the block reads before
it ends (a ``fetch*`` sends what is queued and waits for that result, without
ending the transaction).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import psycopg
from psycopg import AsyncConnection
from psycopg.pq import TransactionStatus
from psycopg.rows import DictRow

_OPEN = (TransactionStatus.INTRANS, TransactionStatus.INERROR)


@asynccontextmanager
async def pipelined_transaction(
    conn: AsyncConnection[DictRow],
) -> AsyncIterator[AsyncConnection[DictRow]]:
    """``conn`` in pipeline mode, in a transaction that commits when the block ends.

    ``conn`` is an autocommit connection (the pool's) outside any transaction or
    pipeline. The results of the block's statements are all read by the time it
    has ended: a cursor's rows can be fetched after it without a round trip. A
    statement the server refuses raises at the latest when the block ends; that,
    or an exception of the block, rolls the whole transaction back and
    propagates. A ``conn.transaction()`` inside the block is a savepoint.
    """
    try:
        async with conn.pipeline():
            await conn.execute("BEGIN")
            yield conn
            await conn.execute("COMMIT")
    except BaseException:
        # After a refusal the queued COMMIT was skipped; after the block's own error it
        # was never sent: either way the transaction is still open, and nothing of it stays.
        if conn.pgconn.transaction_status in _OPEN:
            with suppress(psycopg.Error):  # a broken connection: the pool discards it
                await conn.rollback()
        raise
