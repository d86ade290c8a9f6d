"""Throughput, latency and CPU per run as concurrency rises: Plait against the floor.

The floor is the 10-node graph of ``overhead.py`` run in this process by LangGraph
with its own Postgres saver (``AsyncPostgresSaver``) and the same durability (what
any durable LangGraph program pays). Plait is a real ``plait serve`` with the
options given (its defaults when none), driven over HTTP as ``server.py`` drives it.
For each concurrency in ``--levels``, both run ``max(--runs, 4 x concurrency)`` runs,
alternating floor and Plait, after a warm-up at that concurrency.

Goals (issue 19): at every level Plait's throughput >= 0.8x the floor's, and it
never falls as concurrency rises; time to first SSE event p50 <= 20 ms at
concurrency 10. CPU per run is reported for each part (the client, the server
process tree, Postgres) so ``docs/operations.md``'s capacity model can be checked.

    .venv/bin/python bench/concurrency.py [--levels 10,50,200] [--runs 300]
        [--workers N] [--worker-processes K] [--section NAME]

``--section`` names the README section to write (``concurrency`` by default), so
runs with different server options keep their own tables. Uses
``PLAIT_DATABASE_URL``, else the embedded server under ``.plait/``.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

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
from overhead import describe_server

from plait.engine.store import database_url, migrate, open_pool

HEADER = (
    "| concurrency | floor runs/s | Plait runs/s | Plait / floor "
    "| latency p50 floor / Plait (ms) | Plait p95 (ms) | first SSE event p50 / p95 (ms) "
    "| CPU per run, floor: graph + Postgres (ms) "
    "| CPU per run, Plait: server + Postgres + client (ms) "
    "| Plait CPU / floor CPU (server + Postgres) |\n"
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)
#: The floor's pool: as large as the server's default pool (``pool_max_size``).
FLOOR_POOL = 20


@dataclass
class Level:
    """The figures of one contender at one concurrency."""

    concurrency: int
    timings: Timings
    cpu: CpuMeter


def serve_options(args: argparse.Namespace) -> str:
    """The ``plait serve`` options of this run, as a person would type them."""
    options = []
    if args.workers is not None:
        options.append(f"--workers {args.workers}")
    if args.worker_processes:
        options.append(f"--worker-processes {args.worker_processes}")
    return " ".join(options) or "(defaults)"


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--levels", default="10,50,200", help="concurrencies, comma-separated")
    parser.add_argument("--runs", type=int, default=300, help="least runs per level")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--workers", type=int, default=None, help="plait serve --workers")
    parser.add_argument("--worker-processes", type=int, default=0)
    parser.add_argument("--durability", choices=("sync", "async", "exit"), default="sync")
    parser.add_argument("--section", default="concurrency", help="README section to write")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    args = parser.parse_args()
    levels = [int(level) for level in args.levels.split(",")]

    load_before = os.getloadavg()
    url = database_url()
    floor: list[Level] = []
    plait: list[Level] = []
    async with await open_pool(url, max_size=FLOOR_POOL) as pool:
        await migrate(pool)
        server = await describe_server(pool)
        local = in_process(pool, args.durability)
        with serve_bench(url, args.workers, args.worker_processes) as (base, process):
            for concurrency in levels:
                runs = max(args.runs, 4 * concurrency)
                async with client(base, concurrency) as http:
                    firsts: list[float] = []
                    remote = over_http(http, firsts, args.durability)
                    for name, one, pid, into in (
                        ("floor", local, None, floor),
                        ("plait", remote, process.pid, plait),
                    ):
                        await in_batches(max(args.warmup, concurrency), concurrency, one)
                        firsts.clear()
                        await vacuum(pool)
                        cpu = CpuMeter(pid)
                        with cpu.batch(runs):
                            timings = await in_batches(runs, concurrency, one)
                        timings.first_events = list(firsts)
                        into.append(Level(concurrency, timings, cpu))
                        print(
                            f"{name} c={concurrency}: {timings.throughput:.1f} runs/s, "
                            f"p50 {ms(median(timings.latencies))} ms",
                            flush=True,
                        )
    load_after = os.getloadavg()

    rows = []
    misses: list[str] = []
    previous = 0.0
    for low, high in zip(floor, plait, strict=True):
        ratio = high.timings.throughput / low.timings.throughput
        falls = high.timings.throughput < 0.95 * previous
        previous = max(previous, high.timings.throughput)
        first = median(high.timings.first_events)
        if ratio < 0.8:
            misses.append(f"at {low.concurrency} below 0.8x the floor")
        if falls:
            misses.append(f"at {low.concurrency} below its throughput at fewer runs at once")
        rows.append(
            f"| {low.concurrency} | {low.timings.throughput:.1f} | "
            f"{high.timings.throughput:.1f} | **{ratio:.2f}**{' (falls)' if falls else ''} | "
            f"{ms(median(low.timings.latencies))} / {ms(median(high.timings.latencies))} | "
            f"{ms(percentile(high.timings.latencies, 0.95))} | "
            f"{ms(first)} / {ms(percentile(high.timings.first_events, 0.95))} | "
            f"{ms(low.cpu.own)} + {ms(low.cpu.postgres)} | "
            f"{ms(high.cpu.server)} + {ms(high.cpu.postgres)} + {ms(high.cpu.own)} | "
            f"{_ratio(high.cpu, low.cpu)} |"
        )
    if args.worker_processes:
        rows.append("")
        rows.append(
            "Plait's server CPU per run split (ms), API process / its "
            f"{args.worker_processes} worker process(es): "
            + "; ".join(
                f"{level.concurrency} at once: {ms(level.cpu.server_alone)} / "
                f"{ms(level.cpu.server - level.cpu.server_alone)}"
                for level in plait
            )
            + "."
        )
    most, fewer = plait[-1], plait[:-1]
    holds = ""
    if fewer:
        best = max(fewer, key=lambda level: level.timings.throughput)
        kept = most.timings.throughput / best.timings.throughput
        holds = (
            f"\nAt {most.concurrency} runs at once Plait keeps **{kept:.2f}x** its throughput at "
            f"{best.concurrency} ({most.timings.throughput:.1f} against "
            f"{best.timings.throughput:.1f} runs/s).\n"
        )
    options = serve_options(args)
    command = (
        f"bench/concurrency.py --levels {args.levels} --runs {args.runs} "
        f"--durability {args.durability}"
    )
    if args.workers is not None:
        command += f" --workers {args.workers}"
    if args.worker_processes:
        command += f" --worker-processes {args.worker_processes}"
    body = f"""
Measured {machine()}; {server}; load average {load_before[0]:.1f} before,
{load_after[0]:.1f} after (2 cores shared with other work: throughput is indicative,
CPU per run firmer).

Method: `{command}`: the 10-node graph of `overhead.py`, at each concurrency
`max(runs, 4 x concurrency)` runs of the floor (LangGraph in this process with
`AsyncPostgresSaver`, `durability="{args.durability}"`, a pool of {FLOOR_POOL}
connections) and then of `plait serve {options}` over HTTP (a new thread, then
`POST /threads/{{id}}/runs/stream` read to `end`), each after a warm-up at that
concurrency. CPU per run: the floor's process + Postgres; Plait's server process
tree + Postgres + the client.

{HEADER}
{chr(10).join(rows)}

{_verdict(misses)}
{holds}"""
    print(body)
    if not args.no_readme:
        write_section(args.section, body)


def _verdict(misses: list[str]) -> str:
    """Whether the goal holds (>= 0.8x the floor at every level, never falling), and where not."""
    if not misses:
        return "Meets the goal at every level (Plait >= 0.8x the floor, never falling)."
    return f"Misses the goal (>= 0.8x the floor, never falling): {'; '.join(misses)}."


def _ratio(plait: CpuMeter, floor: CpuMeter) -> str:
    """Plait's server + Postgres CPU per run over the floor's graph + Postgres."""
    if plait.postgres is None or floor.postgres is None:
        return "-"
    return f"{(plait.server + plait.postgres) / (floor.own + floor.postgres):.2f}x"


if __name__ == "__main__":
    uvloop.run(main())
