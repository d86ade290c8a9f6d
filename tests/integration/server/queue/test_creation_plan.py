"""A run's creation is planned once per connection, not on every run: PostgreSQL keeps
a generic plan of its statement. Its check for a direct claim, copied into the plan at
each use, once made the generic plan look dearer than planning anew; creations queued
for a busy worker then spent half a millisecond of PostgreSQL each on planning."""

from __future__ import annotations

import pytest

from plait.engine.store.pool import Pool
from plait.server.graphs.versions import save_version
from plait.server.queue.runs import DirectClaim
from tests.integration.server.queue.conftest import run_on_new_thread, spec_text, unique

pytestmark = pytest.mark.postgres

# PostgreSQL plans a prepared statement anew for its first five runs, then chooses.
CREATIONS = 8


@pytest.mark.parametrize("direct", [False, True], ids=["queued", "claimed-directly"])
async def test_creations_reuse_a_generic_plan(lone_pool: Pool, direct: bool) -> None:
    graph = await save_version(lone_pool, spec_text(unique("g")), file="<test>")
    for _ in range(CREATIONS):
        claim = DirectClaim("worker-1", 30.0) if direct else None
        run = await run_on_new_thread(lone_pool, graph, direct=claim)
        assert run.status == ("running" if direct else "pending")
    async with lone_pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE '%%INSERT INTO plait_runs%%' "
            "AND statement NOT LIKE '%%pg_prepared_statements%%'"  # this one
        )
        plans = await cursor.fetchall()
    assert plans == [{"generic_plans": CREATIONS - 5, "custom_plans": 5}]
