"""The spec-check processes refuse work past their queue, and the API says when to retry."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from plait.server.graphs.spec_checks import QUEUED_PER_PROCESS, SpecChecks, SpecChecksBusy
from plait.server.http import problems

SPEC = (Path(__file__).resolve().parents[3] / "specs" / "summarize.yaml").read_text()


@pytest.fixture(scope="module")
def checks() -> Iterator[SpecChecks]:
    pool = SpecChecks(processes=1, seconds=30)
    pool.start()
    yield pool
    pool.close()


async def test_one_check_past_the_queue_is_refused_and_the_rest_are_answered(
    checks: SpecChecks,
) -> None:
    calls = [
        checks.check(SPEC, f"spec-{i}.yaml", (), keep=False) for i in range(QUEUED_PER_PROCESS + 1)
    ]
    answers = await asyncio.gather(*calls, return_exceptions=True)
    refused = [answer for answer in answers if isinstance(answer, SpecChecksBusy)]
    assert len(refused) == 1
    assert "8 specs are waiting" in str(refused[0])
    checked = [answer for answer in answers if isinstance(answer, tuple)]
    assert len(checked) == QUEUED_PER_PROCESS
    assert all(issues == [] for _, issues in checked)


async def test_a_busy_server_answers_503_with_retry_after() -> None:
    app = FastAPI()
    problems.install(app)

    @app.post("/graphs/validate")
    async def validate() -> None:
        raise SpecChecksBusy(8)

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.post("/graphs/validate")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == "urn:plait:problem:busy"
    assert "retry in a moment" in body["detail"]
