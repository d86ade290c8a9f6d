"""One request cannot freeze ``plait serve`` (issue 14, item 4).

Before: a 50 KB body of ``[`` sent to ``POST /graphs/validate`` kept the API's
event loop busy for 25-32 s (``GET /ok`` took 30.9 s); a billion-laughs YAML
4.6 s; a 30 MB JSON body 1.4 s. Here a real ``plait serve`` gets ten such
requests at a time for several seconds (from another process,
hostile_load.py) while this test streams a run and asks ``GET /ok`` every
20 ms. The loop must never be blocked: no ``/ok`` waits anywhere near the
shortest stall of before (1.4 s), and the run's events keep arriving. (The
issue's bound, p99 <= 50 ms, is printed, not asserted: on a shared 2-core CI
machine it measures the neighbours as much as the server.) Every hostile
request gets its clear answer: a located ``yaml-too-deep`` / ``yaml-too-large``
issue, or 413.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import fresh_database
from tests.integration.server.harness import REPO, Cluster, cluster

pytestmark = pytest.mark.postgres

SPECS = Path(__file__).parent / "specs"
SOURCES = [SPECS / "ticker.yaml", SPECS / "ticker_steps.py"]
ATTACK_SECONDS = 6.0
PROBE_SECONDS = 0.02
#: Longest GET /ok while attacked: the shortest stall before the limits was 1.4 s.
OK_MAX_SECONDS = 1.0
#: The ticker streams an event every ~50 ms; a stall of this long means a blocked loop.
STREAM_GAP_SECONDS = 1.0
EXPECTED = {
    "brackets": "200 yaml-too-deep 1:101",
    "laughs": "200 yaml-too-large 6:15",  # l5's second alias
    "too_long_yaml": "200 yaml-too-large 1:524289",
    "huge_json": "413 urn:plait:problem:body-too-large",
}


@pytest.fixture
def served(postgres_server_url: str, tmp_path: Path) -> Iterator[Cluster]:
    with (
        fresh_database(postgres_server_url) as url,
        cluster(url, tmp_path, SOURCES) as running,
    ):
        yield running


async def _stream(base: str, arrivals: list[float], started: asyncio.Event) -> list[str]:
    """Stream a ticker run to its end; note when each event arrived."""
    names: list[str] = []
    async with httpx.AsyncClient(base_url=base, timeout=120.0) as http:
        thread = (await http.post("/threads", json={})).raise_for_status().json()
        body = {"assistant_id": "ticker", "input": {"until": 250}, "stream_mode": ["updates"]}
        path = f"/threads/{thread['thread_id']}/runs/stream"
        async with http.stream("POST", path, json=body) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if line.startswith("event:"):
                    names.append(line.partition(":")[2].strip())
                    arrivals.append(time.monotonic())
                    if len(names) >= 5:
                        started.set()
    return names


async def _probe(base: str, until: float) -> list[float]:
    """``GET /ok`` every PROBE_SECONDS until ``until``: each answer's latency."""
    latencies: list[float] = []
    async with httpx.AsyncClient(base_url=base, timeout=60.0) as http:
        while time.monotonic() < until:
            sent = time.monotonic()
            response = await http.get("/ok")
            latencies.append(time.monotonic() - sent)
            assert response.status_code == 200
            await asyncio.sleep(PROBE_SECONDS)
    return latencies


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


async def test_hostile_validation_requests_do_not_block_the_loop(served: Cluster) -> None:
    arrivals: list[float] = []
    started = asyncio.Event()
    stream = asyncio.create_task(_stream(served.url, arrivals, started))
    await asyncio.wait_for(started.wait(), 60)

    attack = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.integration.server.multiprocess.hostile_load",
        served.url,
        str(ATTACK_SECONDS),
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
    )
    window_start = time.monotonic()
    latencies = await _probe(served.url, window_start + ATTACK_SECONDS)
    output, _ = await asyncio.wait_for(attack.communicate(), 120)
    window_end = time.monotonic()
    names = await asyncio.wait_for(stream, 120)

    tally = json.loads(output)
    for kind, expected in EXPECTED.items():
        assert tally[kind], f"no {kind} request was answered"
        assert set(tally[kind]) == {expected}, (kind, tally[kind])
    assert len(latencies) > 50
    p99 = _p99(latencies)
    assert max(latencies) <= OK_MAX_SECONDS, (
        f"GET /ok p99 {p99 * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms"
    )
    during = [t for t in arrivals if window_start <= t <= window_end]
    assert len(during) > 20
    gaps = [b - a for a, b in itertools.pairwise(during)]
    assert max(gaps) <= STREAM_GAP_SECONDS, f"the stream stalled {max(gaps):.2f}s"
    assert names[-1] == "end"
    print(
        f"hostile requests answered: { {k: sum(v.values()) for k, v in tally.items()} }; "
        f"GET /ok p50 {sorted(latencies)[len(latencies) // 2] * 1000:.1f} ms, "
        f"p99 {p99 * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms over {len(latencies)}; "
        f"stream events during the attack {len(during)}, largest gap {max(gaps) * 1000:.0f} ms"
    )
