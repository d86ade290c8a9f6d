"""Fixtures of the worker tests: a database of their own, the test specs, run helpers.

The worker claims *any* pending run, so these tests use a database no other
test module writes runs to.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from plait.engine.store.pool import Pool
from plait.server.graphs import versions
from plait.server.queue import journal, runs, threads
from plait.server.queue.runs import Run
from plait.server.workers.worker import Worker
from tests.conftest import fresh_database
from tests.integration.server.harness import registered_pool
from tests.polling import until

SPECS_DIR = Path(__file__).parent / "specs"
WAIT_SECONDS = 30.0


@pytest.fixture(scope="package")
def worker_database_url(postgres_server_url: str) -> Iterator[str]:
    """A database for these tests only."""
    with fresh_database(postgres_server_url) as url:
        yield url


@pytest.fixture(scope="package")
async def wpool(worker_database_url: str) -> AsyncIterator[Pool]:
    """A migrated pool on the package's database, with the test specs registered."""
    async with registered_pool(worker_database_url, SPECS_DIR) as opened:
        yield opened


async def file_appears(path: Path) -> None:
    """Wait until ``path`` exists."""

    async def exists() -> bool:
        return await asyncio.to_thread(path.exists)

    await until(exists, f"{path.name} to appear")


async def run_reaches(pool: Pool, run_id: str, *statuses: str) -> Run:
    """Wait until the run has one of ``statuses``; return it."""

    async def check() -> Run | None:
        run = await runs.get_run(pool, run_id)
        return run if run is not None and run.status in statuses else None

    result: Run = await until(check, f"run {run_id} to be {' or '.join(statuses)}")
    return result


async def new_run(
    pool: Pool,
    graph: str,
    *,
    thread_id: str | None = None,
    strategy: str = "reject",
    **kwargs: Any,
) -> Run:
    """Create a run of ``graph@1.0.0`` on a new thread (or ``thread_id``)."""
    version = await versions.get_version(pool, graph, "1.0.0", specs_dir=SPECS_DIR)
    assert version is not None
    if thread_id is None:
        thread_id = (await threads.create_thread(pool))["thread_id"]
    run, created = await runs.create_run(
        pool,
        thread_id=thread_id,
        graph=version,
        kwargs=kwargs,
        metadata={"test": "worker"},
        multitask_strategy=strategy,
    )
    assert created
    return run


async def events_of(pool: Pool, run_id: str) -> list[journal.JournalEvent]:
    """The run's journal."""
    return await journal.read_after(pool, run_id)


def calls(folder: Path) -> list[str]:
    """The steps called so far, in order."""
    log = folder / "calls.log"
    return log.read_text(encoding="utf-8").split() if log.exists() else []


@asynccontextmanager
async def running_worker(pool: Pool, **options: Any) -> AsyncIterator[Worker]:
    """A worker running in this event loop; stopped (runs handed back) on exit."""
    options.setdefault("lease_seconds", 3.0)
    worker = Worker(pool, specs_dir=SPECS_DIR, **options)
    task = asyncio.create_task(worker.run())
    try:
        async with asyncio.timeout(WAIT_SECONDS):
            await worker.started.wait()
        yield worker
    finally:
        worker.stop()
        await task
