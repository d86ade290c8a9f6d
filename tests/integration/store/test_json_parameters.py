"""JSON parameters the pool writes (orjson, the standard library where orjson refuses):
what is read back is what was written."""

from __future__ import annotations

import pytest
from psycopg.types.json import Json, Jsonb

from plait.engine.store.pool import Pool

pytestmark = pytest.mark.postgres

VALUE = {
    "order_id": "A-1",
    "amount": 12.5,
    "text": 'naïve ✓ "quoted" \\ slash',
    "nested": {"zone": "eu", "at": [1, 2.0, None, True]},
}


@pytest.mark.parametrize("wrapper", [Json, Jsonb])
async def test_json_parameters_read_back_as_written(pool: Pool, wrapper: type) -> None:
    huge = 2**70  # beyond orjson's 64 bits: the standard library writes it
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT %s AS value, %s::text AS huge, %s AS keys",
            (wrapper(VALUE), wrapper({"n": huge}), wrapper({1: "one", 2: "two"})),
        )
        row = await cursor.fetchone()
    assert row is not None
    assert row["value"] == VALUE
    assert row["huge"].replace(" ", "") == f'{{"n":{huge}}}'
    assert row["keys"] == {"1": "one", "2": "two"}
    if wrapper is Json:  # kept as text: the keys stay in the order written
        assert list(row["value"]) == list(VALUE)
