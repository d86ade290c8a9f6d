"""Plait over HTTP against the same graph in-process and behind a bare server, plus the
cost of parked runs.

1. Throughput and latency: the 10-node linear graph of ``overhead.py`` run
   ``--runs`` times at concurrency ``--concurrency`` by three contenders, one
   after the other: (a) in this process with LangGraph's ``AsyncPostgresSaver``
   (``plait.engine.compiler``'s graph, a new saver per run: the floor of issue 19);
   (b) behind the bare baseline server of ``bare_server.py`` (FastAPI,
   sse-starlette and uvicorn as ``plait serve`` uses them, the graph run in the
   request: what any Python server spends to stream it, with nothing durable);
   (c) through a real ``plait serve``. Both servers get the same requests: a new
   thread, then ``POST /threads/{id}/runs/stream`` read to ``end``, with aiohttp.
   Goal: Plait's throughput >= 0.8x in-process; time to first SSE event p50 <= 10 ms.
   Where the CPU goes is measured per run for each: this process (the client,
   for HTTP), the server, and Postgres (its processes on this machine). Plait's
   time to first event is also measured with runs started at a steady rate of
   half its throughput (``--steady``), so the server is busy but not saturated.
2. Parked runs: ``--parked`` runs of a one-approval graph are started in the
   background and all stop on their approval; the server's RSS growth is
   divided by their number, and no run may still hold a worker.
   Goal: < 10 KB per parked run.

    .venv/bin/python bench/server.py [--runs 300] [--concurrency 10] [--parked 1000]
        [--durability sync]

All contenders use the same LangGraph ``durability`` (``sync`` by default, the
server's default; the in-process run passes it to ``ainvoke``, the HTTP runs
send it in the request body) and the same event loop, uvloop (uvicorn runs the
servers on it; this script runs the in-process contender and the client on it).

The client is aiohttp: on these 2-core machines the client's CPU is taken from
the server and Postgres, and aiohttp spends less than half of what httpx does
per run (measured: ~5 ms against ~12 ms).

Uses ``PLAIT_DATABASE_URL``, else the embedded server under ``.plait/``.
Writes its figures into bench/README.md (``--no-readme`` prints only).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import uvloop
from _report import machine, median, percentile, write_section
from _runs import (
    CpuMeter,
    Timings,
    client,
    in_batches,
    in_process,
    ms,
    over_http,
    serve_bench,
    vacuum,
)
from _serve import bare_serve
from overhead import NODES, describe_server

from plait.engine.store import database_url, migrate, open_pool
from plait.engine.store.pool import Pool

BENCH = Path(__file__).resolve().parent


async def at_rate(runs: int, rate: float, limit: int, one: Callable[[], Awaitable[float]]) -> None:
    """Start ``one`` ``runs`` times at ``rate`` per second (at most ``limit`` at once)."""
    slots = asyncio.Semaphore(limit)

    async def slot() -> None:
        async with slots:
            await one()

    tasks = []
    start = time.perf_counter()
    for index in range(runs):
        # On a schedule, not after each run: the load does not slow down with the server.
        await asyncio.sleep(max(0.0, start + index / rate - time.perf_counter()))
        tasks.append(asyncio.create_task(slot()))
    await asyncio.gather(*tasks)


def rss_kib(pid: int) -> int:
    """Resident set size of a process in KiB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


async def park(http: aiohttp.ClientSession, count: int, concurrency: int) -> None:
    """Start ``count`` background runs of ``park`` and wait until each stopped on its approval."""

    async def call(method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        async with http.request(method, path, json=body) as response:
            response.raise_for_status()
            return await response.json()

    async def one() -> float:
        tid = (await call("POST", "/threads", {}))["thread_id"]
        body = {"assistant_id": "park", "input": {"n": 1}}
        run = await call("POST", f"/threads/{tid}/runs", body)
        await call("GET", f"/threads/{tid}/runs/{run['run_id']}/join")
        status = (await call("GET", f"/threads/{tid}"))["status"]
        assert status == "interrupted", status
        return 0.0

    await in_batches(count, concurrency, one)


async def held_runs(pool: Pool) -> int:
    """Runs a worker holds right now: ``running`` under a lease.

    (A killed CLI run stays ``running`` without a lease and holds nothing.)
    """
    async with pool.connection() as conn:
        row = await (
            await conn.execute(
                "SELECT count(*) AS n FROM plait_runs "
                "WHERE status = 'running' AND lease_owner IS NOT NULL"
            )
        ).fetchone()
    return int(row["n"]) if row else -1


async def autovacuum(pool: Pool) -> str:
    """The server's ``autovacuum`` setting (``on``/``off``)."""
    async with pool.connection() as conn:
        row = await (await conn.execute("SHOW autovacuum")).fetchone()
    return str(row["autovacuum"]) if row else "?"


@dataclass
class Contender:
    """One contender's figures: the measured batch, its CPU, and runs one at a time."""

    timings: Timings
    cpu: CpuMeter
    alone: list[float]


async def measure_http(
    http: aiohttp.ClientSession, pid: int, pool: Pool, args: argparse.Namespace
) -> Contender:
    """Warm a server up, then its measured batch at ``--concurrency`` and ``--sequential``
    runs one at a time (time to first event without queueing behind other runs)."""
    firsts: list[float] = []
    remote = over_http(http, firsts, args.durability)
    await in_batches(args.warmup, args.concurrency, remote)
    firsts.clear()
    await vacuum(pool)
    cpu = CpuMeter(pid)
    with cpu.batch(args.runs):
        timings = await in_batches(args.runs, args.concurrency, remote)
    timings.first_events = firsts
    alone: list[float] = []
    await in_batches(args.sequential, 1, over_http(http, alone, args.durability))
    return Contender(timings, cpu, alone)


def _than(difference: float | None) -> str:
    """``difference`` (ms) as "x ms more than" or "x ms less than"."""
    if difference is None:
        return "(unmeasured) more than"
    return f"{ms(abs(difference))} ms {'more' if difference >= 0 else 'less'} than"


def ceiling(inproc: Contender, bare: Contender, plait: Contender) -> str:
    """What the CPU figures say about the throughput ratio this machine allows."""
    cores = os.cpu_count() or 1
    graph_core = inproc.cpu.own * inproc.timings.throughput
    server_core = plait.cpu.server * plait.timings.throughput
    # One process at ratio 0.8 may spend 1 / 0.8 of the in-process CPU per run.
    budget = inproc.cpu.own / 0.8
    text = (
        f"Where the time goes: in-process, the graph's process is busy {graph_core:.0%} of "
        f"a core, so the in-process figure is what one core does. The bare server, which "
        f"keeps nothing but checkpoints, spends {ms(bare.cpu.server)} ms of CPU per run, "
        f"{ms(bare.cpu.server - inproc.cpu.own)} ms more than the graph in-process (what "
        "uvicorn, FastAPI and SSE cost here), and reaches "
        f"{bare.timings.throughput / inproc.timings.throughput:.2f}x in-process. "
        f"Plait's server process is busy {server_core:.0%} of a core at "
        f"{ms(plait.cpu.server)} ms per run ({_than(plait.cpu.server - bare.cpu.server)} the "
        "bare server), and Postgres spends "
        f"{_than(_minus(plait.cpu.postgres, bare.cpu.postgres))} for the bare server: what "
        "makes a run durable and shared (the thread and run rows, the queue: create, claim, "
        "finish; the journal and its notifications). One process reaches 0.8x in-process "
        "only at "
        f"<= {ms(budget)} ms per run, <= {ms(budget - inproc.cpu.own)} ms on top of the "
        f"graph's own {ms(inproc.cpu.own)} ms."
    )
    total = plait.cpu.total
    if total is None:
        return text
    most = cores / total
    reach = most / inproc.timings.throughput
    if reach < 0.8:
        return text + (
            f" Spreading the server over processes (`--worker-processes`) does not lift "
            f"that here: the client, the server and Postgres together need "
            f"{ms(total)} ms of CPU per run, so this machine's {cores} cores "
            f"could not serve more than {most:.0f} runs/s however the work were split "
            f"({reach:.2f}x in-process)."
        )
    return text + (
        f" The client, the server and Postgres together need {ms(total)} ms of "
        f"CPU per run: this machine's {cores} cores could serve up to {most:.0f} runs/s "
        f"({reach:.2f}x in-process) with the work split over processes "
        "(`--worker-processes`)."
    )


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300, help="runs of each contender")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--sequential", type=int, default=50, help="runs one at a time")
    parser.add_argument(
        "--steady", type=int, default=200, help="runs started at half Plait's throughput"
    )
    parser.add_argument("--parked", type=int, default=1000, help="runs parked on approvals")
    parser.add_argument("--workers", type=int, default=None, help="plait serve --workers")
    parser.add_argument(
        "--worker-processes",
        type=int,
        default=0,
        help="plait serve --worker-processes (0: workers in the server process)",
    )
    parser.add_argument(
        "--durability",
        choices=("sync", "async", "exit"),
        default="sync",
        help="LangGraph durability of every contender (the server's default is sync)",
    )
    parser.add_argument("--no-readme", action="store_true", help="print only")
    args = parser.parse_args()

    load = os.getloadavg()
    url = database_url()
    async with await open_pool(url) as pool:
        await migrate(pool)
        server = await describe_server(pool)
        vacuum_setting = await autovacuum(pool)
        local = in_process(pool, args.durability)
        await in_batches(args.warmup, args.concurrency, local)
        await vacuum(pool)
        inproc_cpu = CpuMeter()
        with inproc_cpu.batch(args.runs):
            inproc_timings = await in_batches(args.runs, args.concurrency, local)
        inproc = Contender(inproc_timings, inproc_cpu, [])

        env = dict(os.environ, PLAIT_DATABASE_URL=url)
        with (
            tempfile.TemporaryDirectory(prefix="plait-bench-") as logs,
            bare_serve(Path(logs), env) as (base, process),
        ):
            async with client(base, args.concurrency) as http:
                bare = await measure_http(http, process.pid, pool, args)

        with serve_bench(url, args.workers, args.worker_processes) as (base, process):
            async with client(base, args.concurrency) as http:
                plait = await measure_http(http, process.pid, pool, args)
                # A steady load below saturation: time to first event of a busy server.
                steady: list[float] = []
                steady_rate = plait.timings.throughput / 2
                await at_rate(
                    args.steady,
                    steady_rate,
                    args.concurrency,
                    over_http(http, steady, args.durability),
                )

                # Warm the parking path (imports, caches, pools) before the baseline.
                await park(http, 50, args.concurrency)
                before = rss_kib(process.pid)
                started = time.perf_counter()
                await park(http, args.parked, args.concurrency)
                park_seconds = time.perf_counter() - started
                after = rss_kib(process.pid)
                held = await held_runs(pool)

    served = plait.timings
    ratio = served.throughput / inproc.timings.throughput
    bare_ratio = bare.timings.throughput / inproc.timings.throughput
    per_run_kib = (after - before) / args.parked
    first_p50 = median(served.first_events)
    alone_p50 = median(plait.alone)
    steady_p50 = median(steady)
    verdicts = {
        "throughput": "meets" if ratio >= 0.8 else "misses",
        "first": "meets" if first_p50 <= 0.010 else "misses",
        "alone": "meets" if alone_p50 <= 0.010 else "misses",
        "steady": "meets" if steady_p50 <= 0.010 else "misses",
        "memory": "meets" if per_run_kib * 1024 < 10_000 and held == 0 else "misses",
    }
    command = (
        f"bench/server.py --runs {args.runs} --concurrency {args.concurrency} "
        f"--parked {args.parked} --durability {args.durability}"
    )
    if args.worker_processes:
        command += f" --worker-processes {args.worker_processes}"
        workers_text = f"workers in child processes, `--worker-processes {args.worker_processes}`"
        cpu_text = "the server process (with `plait serve`'s worker children)"
    else:
        workers_text = "workers in the server process, the default"
        cpu_text = "the server process"

    def row(label: str, *cells: str) -> str:
        return f"| {label} | {' | '.join(cells)} |"

    def firsts(values: list[float]) -> str:
        return f"{ms(median(values))} / {ms(percentile(values, 0.95))}"

    contenders = (inproc, bare, plait)
    table = "\n".join(
        [
            f"| 10-node graph, concurrency {args.concurrency} | in-process | bare server "
            "| Plait over HTTP |",
            "|---|---:|---:|---:|",
            row("throughput (runs/s)", *(f"{c.timings.throughput:.1f}" for c in contenders)),
            row("throughput / in-process", "1", f"{bare_ratio:.2f}", f"**{ratio:.2f}**"),
            row("latency p50 (ms)", *(ms(median(c.timings.latencies)) for c in contenders)),
            row(
                "latency p95 (ms)",
                *(ms(percentile(c.timings.latencies, 0.95)) for c in contenders),
            ),
            row(
                "CPU per run (ms): the graph's process / the server",
                ms(inproc.cpu.own),
                ms(bare.cpu.server),
                ms(plait.cpu.server),
            ),
            row(
                "CPU per run (ms): the client (this process)",
                "-",
                ms(bare.cpu.own),
                ms(plait.cpu.own),
            ),
            row("CPU per run (ms): Postgres", *(ms(c.cpu.postgres) for c in contenders)),
            row("CPU per run (ms): all of it", *(ms(c.cpu.total) for c in contenders)),
            row(
                "time to first SSE event p50 / p95 (ms)",
                "-",
                firsts(bare.timings.first_events),
                firsts(served.first_events),
            ),
            row(
                f"the same, one run at a time ({args.sequential} runs)",
                "-",
                firsts(bare.alone),
                firsts(plait.alone),
            ),
            row(
                f"the same, {args.steady} runs started at {steady_rate:.1f} runs/s "
                "(half Plait's throughput)",
                "-",
                "-",
                firsts(steady),
            ),
        ]
    )
    body = f"""
Measured {machine()}; {server}; load average {load[0]:.1f} when it started
(2 cores shared with other work: figures under load are noisy). The server's
`autovacuum` is {vacuum_setting}: the tables the contenders write are vacuumed
before each measured batch (`VACUUM ANALYZE`), as autovacuum would.

Method: `{command}`:
the {NODES}-node linear graph of `overhead.py`, {args.runs} runs per contender after
{args.warmup} warm-up runs, {args.concurrency} at a time, each on a new thread with a new
`AsyncPostgresSaver`, all with `durability="{args.durability}"`. In-process:
`compile_spec(...).bind(saver).ainvoke` in this process, on uvloop as the servers are.
Bare server: `bench/bare_server.py`, the least a Python server can do to stream this graph
(uvicorn, FastAPI and sse-starlette as `plait serve` uses them, the graph run inside the
request; no queue, journal, thread rows, tenants or logs, so nothing survives a crash).
Plait: a real `plait serve` on 127.0.0.1 ({workers_text}). Both servers get `POST /threads` then
`POST /threads/{{id}}/runs/stream` (`values`, the same `durability` in the body) read to
`end`, from an aiohttp client. The node function `bench_steps.step` is marked
`@inline` (an addition: a server worker calls it on its loop, as the in-process
contender does, instead of in a thread).
Time to first event: from sending the stream POST to the first SSE event (`metadata`).
CPU per run: the CPU time used during the batch, divided by its runs, by this process (the
graph in-process; the client over HTTP), by {cpu_text}, and by every `postgres`
process of this machine. It depends less than throughput on what else the machine runs, yet a
busy second core still raises it (seen: 25-40% for the in-process graph).

{table}

Throughput ratio Plait / in-process **{ratio:.2f}**: {verdicts["throughput"]} the goal (>= 0.8).
The bare server reaches {bare_ratio:.2f}x in-process, and Plait
{served.throughput / bare.timings.throughput:.2f}x the bare server.
Time to first SSE event p50 **{ms(first_p50)} ms** at concurrency {args.concurrency}
({verdicts["first"]} the goal, <= 10 ms), **{ms(steady_p50)} ms** at half the throughput
({verdicts["steady"]} it) and **{ms(alone_p50)} ms** one run at a time
({verdicts["alone"]} it).

{ceiling(inproc, bare, plait)}

Parked runs: {args.parked} background runs of a one-approval graph (`park`), each on its
own thread, joined until the thread is `interrupted` ({park_seconds:.1f} s), after 50
warm-up ones. Server RSS {before / 1024:.1f} MiB -> {after / 1024:.1f} MiB:
**{per_run_kib:.2f} KiB per parked run**; runs still holding a worker: **{held}**.
{verdicts["memory"].capitalize()} the goal (< 10 KB each, no worker held).
"""
    print(body)
    if not args.no_readme:
        write_section("server", body)


if __name__ == "__main__":
    # uvloop, as uvicorn runs both servers: the in-process contender gets the same loop.
    uvloop.run(main())
