"""Fixtures of the evaluation tests: a database of their own (workers claim any run and any
owed score), the test specs, and a file where graders note each call."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from plait.engine.store.pool import Pool
from tests.conftest import fresh_database
from tests.integration.server.harness import registered_pool

SPECS_DIR = Path(__file__).parent / "specs"


@pytest.fixture(scope="package")
def evaluation_database_url(postgres_server_url: str) -> Iterator[str]:
    """A database for these tests only."""
    with fresh_database(postgres_server_url) as url:
        yield url


@pytest.fixture(scope="package")
async def epool(evaluation_database_url: str) -> AsyncIterator[Pool]:
    """A migrated pool on the package's database, with the test specs registered."""
    async with registered_pool(evaluation_database_url, SPECS_DIR) as opened:
        yield opened


@pytest.fixture
def grader_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the test specs' graders append ``<run_id> <grader>`` to, once per call."""
    path = tmp_path / "grader-calls.log"
    monkeypatch.setenv("EVAL_CALLS_FILE", str(path))
    return path


def calls_in(path: Path) -> list[tuple[str, str]]:
    """The grader calls noted so far: ``(run_id, grader)``."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(run_id, grader) for run_id, grader in (line.split() for line in lines)]
