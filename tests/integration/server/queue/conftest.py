"""Helpers for the queue, journal, registry and approvals tests (real Postgres)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from plait.engine.store.migrator import migrate
from plait.engine.store.pool import Pool, open_pool
from plait.server.graphs.versions import GraphVersion, save_version
from plait.server.queue.runs import Run, create_run
from plait.server.queue.threads import create_thread
from tests.conftest import fresh_database


def unique(prefix: str) -> str:
    """A fresh id, so tests sharing the session database never meet."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def spec_text(name: str, version: str = "1.0.0", *, reply: str = "hello", extra: str = "") -> str:
    """A small valid spec: one scripted llm node. ``reply`` changes its digest."""
    return f"""\
apiVersion: plait/v1
kind: Graph
metadata:
  name: {name}
  version: "{version}"
spec:
  state:
    text: {{type: string}}
    reply: {{type: string}}
  models:
    echo:
      provider: scripted
      script:
        - content: "{reply}"
  nodes:
    answer:
      kind: llm
      model: echo
      prompt: "{{{{ state.text }}}}"
      output: reply
{extra}  edges:
    - {{from: START, to: answer}}
    - {{from: answer, to: END}}
"""


async def run_on_new_thread(pool: Pool, graph: GraphVersion, **options: Any) -> Run:
    """A run of ``graph`` (empty input) on a thread of its own; ``options`` go to
    :func:`~plait.server.queue.runs.create_run`."""
    thread = await create_thread(pool, thread_id=str(uuid.uuid4()))
    run, _ = await create_run(
        pool,
        thread_id=thread["thread_id"],
        graph=graph,
        kwargs={"input": {}},
        metadata={},
        **options,
    )
    return run


@pytest.fixture
async def graph(pool: Pool) -> GraphVersion:
    """A graph of its own for one test, stored in the registry (no specs folder)."""
    return await save_version(pool, spec_text(unique("g")), file="<test>")


@pytest.fixture(scope="session")
def queue_database_url(postgres_server_url: str) -> Iterator[str]:
    """A database of the queue tests' own: claims take *any* claimable run, so no
    other test's runs (or in-process workers) may share it."""
    with fresh_database(postgres_server_url) as url:
        yield url


@pytest.fixture(scope="session")
async def queue_pool_session(queue_database_url: str) -> AsyncIterator[Pool]:
    """A migrated pool on the queue tests' database."""
    async with await open_pool(queue_database_url) as opened:
        await migrate(opened)
        yield opened


@pytest.fixture
async def qpool(queue_pool_session: Pool) -> AsyncIterator[Pool]:
    """The queue database, emptied of threads and runs after each test."""
    yield queue_pool_session
    async with queue_pool_session.connection() as conn:
        await conn.execute("DELETE FROM plait_threads")


@pytest.fixture
async def qgraph(queue_pool_session: Pool) -> GraphVersion:
    """A graph stored in the queue tests' database."""
    return await save_version(queue_pool_session, spec_text(unique("g")), file="<test>")


@pytest.fixture
async def lone_pool(empty_database_url: str) -> AsyncIterator[Pool]:
    """A pool of one connection on a database of the test's own: every statement runs on
    one backend, so what it prepared and counted is the test's alone and can be read back."""
    async with await open_pool(empty_database_url, min_size=1, max_size=1) as opened:
        await migrate(opened)
        yield opened
