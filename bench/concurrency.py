"""Throughput, latency and CPU per run as concurrency rises: Plait against the floor.

The floor is the 10-node graph of ``overhead.py`` run in this process by LangGraph
with its own Postgres saver (``AsyncPostgresSaver``) and the same durability (what
any durable LangGraph program pays). Plait is a real ``plait serve`` with the
options given (its defaults when none), driven over HTTP as ``server.py`` drives it.
For each concurrency in ``--levels``, both run ``max(--runs, 4 x concurrency)`` runs,
one after the other, after a warm-up at that concurrency.

This machine's speed drifts by a fifth within minutes (the same server at the same
load: 10.3 to 13.2 ms of CPU a run, batch to batch), so one pass over the levels
measures the drift as much as the levels. ``--rounds R`` passes R times, the order
of the levels turned by one each round and which contender goes first alternated,
and reports each figure's median over the rounds; the ratio to the floor is the
median of each round's ratio (the floor and Plait measured side by side), with its
range.

Goals (issue 19): at every level Plait's throughput >= 0.8x the floor's, and it
never falls as concurrency rises; time to first SSE event p50 <= 20 ms at
concurrency 10. CPU per run is reported for each part (the client, the server
process tree, Postgres) so ``docs/operations.md``'s capacity model can be checked.

    .venv/bin/python bench/concurrency.py [--levels 10,50,200] [--runs 300] [--rounds 3]
        [--workers N] [--worker-processes K] [--section NAME]

``--section`` names the README section to write (``concurrency`` by default), so
runs with different server options keep their own tables. Uses
``PLAIT_DATABASE_URL``, else the embedded server under ``.plait/``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass, field

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
    """The figures of one contender at one concurrency in one round."""

    timings: Timings
    cpu: CpuMeter


@dataclass
class Rounds:
    """One contender's rounds at one concurrency, and their medians."""

    levels: list[Level] = field(default_factory=list)

    def median(self, figure: Callable[[Level], float | None]) -> float | None:
        """The median over the rounds of ``figure`` (None if any round lacks it)."""
        values = [figure(level) for level in self.levels]
        known = [value for value in values if value is not None]
        return median(known) if known and len(known) == len(values) else None

    @property
    def throughput(self) -> float:
        """Median runs per second."""
        return median([level.timings.throughput for level in self.levels])

    @property
    def first_events(self) -> list[float]:
        """Times to first SSE event of every round."""
        return [first for level in self.levels for first in level.timings.first_events]


def serve_options(args: argparse.Namespace) -> str:
    """The ``plait serve`` options of this run, as a person would type them."""
    options = []
    if args.workers is not None:
        options.append(f"--workers {args.workers}")
    if args.worker_processes:
        options.append(f"--worker-processes {args.worker_processes}")
    return " ".join(options) or "(defaults)"


def round_order(levels: list[int], rounds: int) -> list[tuple[int, int, bool]]:
    """(round, concurrency, floor first) in the order they are measured: each round
    turns the levels by one, and the contender that goes first alternates."""
    return [
        (number, levels[(number + index) % len(levels)], number % 2 == 0)
        for number in range(rounds)
        for index in range(len(levels))
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--levels", default="10,50,200", help="concurrencies, comma-separated")
    parser.add_argument("--runs", type=int, default=300, help="least runs per level")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the levels")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--workers", type=int, default=None, help="plait serve --workers")
    parser.add_argument("--worker-processes", type=int, default=0)
    parser.add_argument("--durability", choices=("sync", "async", "exit"), default="sync")
    parser.add_argument("--section", default="concurrency", help="README section to write")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    args = parser.parse_args()
    levels = [int(level) for level in args.levels.split(",")]
    if args.rounds < 1 or min(levels) < 1:
        parser.error("--rounds and every level of --levels must be at least 1")

    load_before = os.getloadavg()
    url = database_url()
    floor = {concurrency: Rounds() for concurrency in levels}
    plait = {concurrency: Rounds() for concurrency in levels}
    async with await open_pool(url, max_size=FLOOR_POOL) as pool:
        await migrate(pool)
        server = await describe_server(pool)
        local = in_process(pool, args.durability)
        with serve_bench(url, args.workers, args.worker_processes) as (base, process):
            for number, concurrency, floor_first in round_order(levels, args.rounds):
                runs = max(args.runs, 4 * concurrency)
                async with client(base, concurrency) as http:
                    firsts: list[float] = []
                    remote = over_http(http, firsts, args.durability)
                    contenders = [
                        ("floor", local, None, floor[concurrency]),
                        ("plait", remote, process.pid, plait[concurrency]),
                    ]
                    for name, one, pid, into in contenders if floor_first else contenders[::-1]:
                        await in_batches(max(args.warmup, concurrency), concurrency, one)
                        firsts.clear()
                        await vacuum(pool)
                        cpu = CpuMeter(pid)
                        with cpu.batch(runs):
                            timings = await in_batches(runs, concurrency, one)
                        timings.first_events = list(firsts)
                        into.levels.append(Level(timings, cpu))
                        print(
                            f"round {number + 1} {name} c={concurrency}: "
                            f"{timings.throughput:.1f} runs/s, "
                            f"p50 {ms(median(timings.latencies))} ms",
                            flush=True,
                        )
    load_after = os.getloadavg()

    rows = []
    misses: list[str] = []
    previous = 0.0
    for concurrency in levels:
        low, high = floor[concurrency], plait[concurrency]
        ratios = [
            mine.timings.throughput / theirs.timings.throughput
            for mine, theirs in zip(high.levels, low.levels, strict=True)
        ]
        ratio = median(ratios)
        spread = f" ({min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else ""
        falls = high.throughput < 0.95 * previous
        previous = max(previous, high.throughput)
        if ratio < 0.8:
            misses.append(f"at {concurrency} below 0.8x the floor ({ratio:.3f})")
        if falls:
            misses.append(f"at {concurrency} below its throughput at fewer runs at once")
        rows.append(
            f"| {concurrency} | {low.throughput:.1f} | {high.throughput:.1f} | "
            f"**{ratio:.2f}**{spread}{' (falls)' if falls else ''} | "
            f"{ms(low.median(lambda level: median(level.timings.latencies)))} / "
            f"{ms(high.median(lambda level: median(level.timings.latencies)))} | "
            f"{ms(high.median(lambda level: percentile(level.timings.latencies, 0.95)))} | "
            f"{ms(median(high.first_events))} / {ms(percentile(high.first_events, 0.95))} | "
            f"{ms(low.median(lambda level: level.cpu.own))} + "
            f"{ms(low.median(lambda level: level.cpu.postgres))} | "
            f"{ms(high.median(lambda level: level.cpu.server))} + "
            f"{ms(high.median(lambda level: level.cpu.postgres))} + "
            f"{ms(high.median(lambda level: level.cpu.own))} | "
            f"{_ratio(high, low)} |"
        )
    if args.worker_processes:
        rows.append("")
        rows.append(
            "Plait's server CPU per run split (ms), API process / its "
            f"{args.worker_processes} worker process(es): "
            + "; ".join(
                f"{concurrency} at once: "
                f"{ms(plait[concurrency].median(lambda level: level.cpu.server_alone))} / "
                + ms(
                    plait[concurrency].median(
                        lambda level: level.cpu.server - level.cpu.server_alone
                    )
                )
                for concurrency in levels
            )
            + "."
        )
    most, fewer = levels[-1], levels[:-1]
    holds = ""
    if fewer:
        best = max(fewer, key=lambda concurrency: plait[concurrency].throughput)
        kept = plait[most].throughput / plait[best].throughput
        holds = (
            f"\nAt {most} runs at once Plait keeps **{kept:.2f}x** its throughput at "
            f"{best} ({plait[most].throughput:.1f} against "
            f"{plait[best].throughput:.1f} runs/s, medians).\n"
        )
    options = serve_options(args)
    command = (
        f"bench/concurrency.py --levels {args.levels} --runs {args.runs} "
        f"--rounds {args.rounds} --durability {args.durability}"
    )
    if args.workers is not None:
        command += f" --workers {args.workers}"
    if args.worker_processes:
        command += f" --worker-processes {args.worker_processes}"
    order = ", ".join(
        f"{concurrency}{'' if floor_first else '*'}"
        for _, concurrency, floor_first in round_order(levels, args.rounds)
    )
    body = f"""
Measured {machine()}; {server}; load average {load_before[0]:.1f} before,
{load_after[0]:.1f} after (2 cores shared with other work: throughput is indicative,
CPU per run firmer).

Method: `{command}`: the 10-node graph of `overhead.py`, at each concurrency
`max(runs, 4 x concurrency)` runs of the floor (LangGraph in this process with
`AsyncPostgresSaver`, `durability="{args.durability}"`, a pool of {FLOOR_POOL}
connections) and of `plait serve {options}` over HTTP (a new thread, then
`POST /threads/{{id}}/runs/stream` read to `end`), each after a warm-up at that
concurrency; {args.rounds} round(s) over the levels in the order {order} (* Plait
first). Each figure is the median over the rounds; Plait / floor is the median of
each round's ratio, with its range; first SSE events are those of every round.
CPU per run: the floor's process + Postgres; Plait's server process tree +
Postgres + the client.

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


def _ratio(plait: Rounds, floor: Rounds) -> str:
    """Plait's server + Postgres CPU per run over the floor's graph + Postgres (medians)."""

    def mine(level: Level) -> float | None:
        pg = level.cpu.postgres
        return None if pg is None else level.cpu.server + pg

    def theirs(level: Level) -> float | None:
        pg = level.cpu.postgres
        return None if pg is None else level.cpu.own + pg

    over, under = plait.median(mine), floor.median(theirs)
    return "-" if over is None or under is None else f"{over / under:.2f}x"


if __name__ == "__main__":
    uvloop.run(main())
