"""The Postgres tool-result store: records, first writer wins, JSON round trip, deletion."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from plait.engine.store.pool import Pool
from plait.engine.store.tool_results import (
    PostgresToolResultStore,
    RecordedResult,
    delete_thread_results,
)


def _context(thread_id: str, tool: str = "charge") -> dict[str, Any]:
    return {"thread_id": thread_id, "run_id": "r1", "node": "pay", "tool": tool, "args": {"a": 1}}


async def test_put_then_get_returns_the_recorded_value(pool: Pool) -> None:
    store = PostgresToolResultStore(pool)
    key, thread = uuid.uuid4().hex, str(uuid.uuid4())
    assert await store.get(key) is None
    value = {"receipt": "r-1", "items": [1, 2.5, None, True], "note": "naïve"}
    stored = await store.put(key, RecordedResult.now(value), **_context(thread))
    assert stored.value == value
    found = await store.get(key)
    assert found == stored


async def test_a_none_result_is_a_record_not_a_miss(pool: Pool) -> None:
    store = PostgresToolResultStore(pool)
    key = uuid.uuid4().hex
    await store.put(key, RecordedResult.now(None), **_context(str(uuid.uuid4())))
    found = await store.get(key)
    assert found is not None and found.value is None


async def test_concurrent_writers_all_get_the_first_record(pool: Pool) -> None:
    store = PostgresToolResultStore(pool)
    key, thread = uuid.uuid4().hex, str(uuid.uuid4())
    records = await asyncio.gather(
        *(store.put(key, RecordedResult.now(n), **_context(thread)) for n in range(8))
    )
    winners = {record.value for record in records}
    assert len(winners) == 1
    assert (await store.get(key)) == records[0]


async def test_deleting_a_thread_deletes_only_its_records(pool: Pool) -> None:
    store = PostgresToolResultStore(pool)
    doomed, kept = str(uuid.uuid4()), str(uuid.uuid4())
    for n in range(2):
        await store.put(f"{doomed}-{n}", RecordedResult.now(n), **_context(doomed))
    await store.put(f"{kept}-0", RecordedResult.now(0), **_context(kept))
    assert await delete_thread_results(pool, doomed) == 2
    assert await store.get(f"{doomed}-0") is None
    assert await store.get(f"{kept}-0") is not None


async def test_an_intent_is_begun_once_per_attempt_even_under_a_race(pool: Pool) -> None:
    store = PostgresToolResultStore(pool)
    key, thread = uuid.uuid4().hex, str(uuid.uuid4())
    assert await store.intent(key) is None
    won = await asyncio.gather(
        *(store.begin(key, 1, answered_run=None, **_context(thread)) for _ in range(8))
    )
    assert won.count(True) == 1
    first = await store.intent(key)
    assert first is not None and (first.attempts, first.parked, first.answered_run) == (
        1,
        False,
        None,
    )

    await store.park(key)
    parked = await store.intent(key)
    assert parked is not None and parked.parked

    assert not await store.begin(key, 3, answered_run="r2", **_context(thread))
    assert await store.begin(key, 2, answered_run="r2", **_context(thread))
    second = await store.intent(key)
    assert second is not None
    assert (second.attempts, second.parked, second.answered_run) == (2, False, "r2")
    assert second.began_at >= first.began_at


async def test_deleting_a_thread_deletes_its_intents(pool: Pool) -> None:
    store = PostgresToolResultStore(pool)
    doomed, kept = str(uuid.uuid4()), str(uuid.uuid4())
    await store.begin(f"{doomed}-i", 1, answered_run=None, **_context(doomed))
    await store.begin(f"{kept}-i", 1, answered_run=None, **_context(kept))
    await delete_thread_results(pool, doomed)
    assert await store.intent(f"{doomed}-i") is None
    assert await store.intent(f"{kept}-i") is not None
