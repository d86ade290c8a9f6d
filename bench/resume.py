"""Resuming a run parked on an approval: Plait over HTTP against LangGraph in-process.

The one-approval ``park`` graph of ``server.py``: each run is started and stops
on its approval; what is timed is the resume alone, one at a time. The floor
resumes in this process (``ainvoke(Command(resume=...))`` on the compiled
spec with LangGraph's ``AsyncPostgresSaver``, ``durability="sync"``); Plait gets ``POST
/threads/{id}/runs/stream`` with ``command: {resume: ...}`` (as the LangGraph
SDK resumes), read to ``end``: the run is queued, claimed, loaded from its
checkpoint and finished. Goal (issue 19, goal 4): Plait's p50 <= 2x the floor's.

    .venv/bin/python bench/resume.py [--runs 100]

Uses ``PLAIT_DATABASE_URL``, else the embedded server under ``.plait/``.
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import uvloop
from _report import machine, median, percentile, write_section
from _runs import PARK_SPEC, client, ms, serve_bench
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.types import Command
from overhead import describe_server

from plait.engine.compiler import compile_spec
from plait.engine.spec.loader import parse_spec
from plait.engine.store import database_url, migrate, open_pool
from plait.engine.store.pool import Pool

DECISION = {"decision": "approve"}


async def floor(pool: Pool, runs: int) -> list[float]:
    """Seconds of each in-process resume, with LangGraph's ``AsyncPostgresSaver``."""
    compiled = compile_spec(parse_spec(PARK_SPEC, "park.yaml", Path("park.yaml")))
    times = []
    for _ in range(runs):
        graph = compiled.bind(AsyncPostgresSaver(pool))
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        parked = await graph.ainvoke({"n": 1}, config, durability="sync")
        assert "__interrupt__" in parked, parked
        start = time.perf_counter()
        done = await graph.ainvoke(Command(resume=DECISION), config, durability="sync")
        times.append(time.perf_counter() - start)
        assert done["decision"]["decision"] == "approve", done
    return times


async def over_http(http: aiohttp.ClientSession, runs: int) -> list[float]:
    """Seconds of each resume through ``plait serve``, from the POST to ``end``."""

    async def call(path: str, body: dict[str, Any]) -> Any:
        async with http.post(path, json=body) as response:
            response.raise_for_status()
            return await response.json()

    times = []
    for _ in range(runs):
        thread = (await call("/threads", {}))["thread_id"]
        parked = await call(
            f"/threads/{thread}/runs/wait", {"assistant_id": "park", "input": {"n": 1}}
        )
        assert "__interrupt__" in parked, parked
        body = {"assistant_id": "park", "command": {"resume": DECISION}, "stream_mode": ["values"]}
        start = time.perf_counter()
        event = ""
        async with http.post(f"/threads/{thread}/runs/stream", json=body) as response:
            response.raise_for_status()
            async for raw in response.content:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("event:"):
                    event = line.partition(":")[2].strip()
                if event in ("end", "error") and not line:
                    break
        times.append(time.perf_counter() - start)
        assert event == "end", event
    return times


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="resumes of each contender")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--no-readme", action="store_true", help="print only")
    args = parser.parse_args()

    load = os.getloadavg()
    url = database_url()
    async with await open_pool(url) as pool:
        await migrate(pool)
        server = await describe_server(pool)
        await floor(pool, args.warmup)
        local = await floor(pool, args.runs)
    with serve_bench(url, None) as (base, _):
        async with client(base, 2) as http:
            await over_http(http, args.warmup)
            remote = await over_http(http, args.runs)
    ratio = median(remote) / median(local)
    body = f"""
Measured {machine()}; {server}; load average {load[0]:.1f} when it started.

Method: `bench/resume.py --runs {args.runs}`: the one-approval `park` graph; each run
started and parked on its approval, then resumed with `{{"decision": "approve"}}`, one
at a time, after {args.warmup} warm-up resumes. In-process: `ainvoke(Command(resume=...))`
with LangGraph's `AsyncPostgresSaver`, `durability="sync"`. Plait: `plait serve` (defaults), `POST
/threads/{{id}}/runs/stream` with `command.resume`, read to `end`.

| resume of a parked run (ms) | in-process | Plait over HTTP |
|---|---:|---:|
| p50 | {ms(median(local))} | {ms(median(remote))} |
| p95 | {ms(percentile(local, 0.95))} | {ms(percentile(remote, 0.95))} |

Plait's p50 is **{ratio:.2f}x** the in-process one (goal <= 2x:
{"meets" if ratio <= 2 else "misses"} it).
"""
    print(body)
    if not args.no_readme:
        write_section("resume", body)


if __name__ == "__main__":
    uvloop.run(main())
