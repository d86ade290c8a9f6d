"""The queue metrics read from Postgres, and what a scrape says when Postgres is gone."""

from __future__ import annotations

import pytest
from prometheus_client.core import Metric

from plait.engine.store.pool import Pool, open_pool
from plait.server.operations.metrics import scrape_database

pytestmark = pytest.mark.postgres


def values(metrics: list[Metric]) -> dict[str, float]:
    """``{name: value}`` of the unlabelled samples."""
    return {s.name: s.value for m in metrics for s in m.samples if not s.labels}


async def test_a_scrape_reads_the_queue_and_says_postgres_is_up(pool: Pool) -> None:
    found = values(await scrape_database(pool))
    assert found["plait_database_up"] == 1.0
    assert "plait_queue_depth" in found and "plait_queue_oldest_pending_age_seconds" in found


async def test_without_postgres_a_scrape_says_so_instead_of_failing(database_url: str) -> None:
    closed = await open_pool(database_url)
    await closed.close()
    assert values(await scrape_database(closed, seconds=2)) == {"plait_database_up": 0.0}
