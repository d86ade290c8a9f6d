"""What a durable step costs over a non-durable one, as Plait saves steps and as LangGraph does.

The Plait-compiled 10-node graph of ``overhead.py``, four ways, interleaved
(order rotated every round) on one psycopg pool, each run on a new thread:

- no checkpointer (nothing durable: the baseline);
- ``durability="sync"`` with LangGraph's ``InMemorySaver`` (checkpoints kept in
  this process, nothing durable): what LangGraph's own checkpointing costs a
  step before any database is involved, the part of the ratio no saver removes;
- ``durability="sync"`` with LangGraph's ``AsyncPostgresSaver`` (each task's
  writes in a pipeline, then the step's checkpoint and blobs in another: a
  statement per row);
- ``durability="sync"`` as Plait's runs save it (``StepSaver`` inside
  ``steps_in_one_trip``, as ``drive()`` does: a step's writes, blobs and
  checkpoint in one statement; docs/decisions.md, 86 and 89).

Goal (issue 19, goal 5): a durable step <= 3x a non-durable one. The ratio is
the median of per-round ratios (durable / non-durable), robust to load drift.

    .venv/bin/python bench/durable_step.py [--runs 200] [--concurrency 1]

With ``--concurrency N``, N runs of the same kind go at once on this loop (a
worker's situation), and a step's time is the batch's wall time / (N x 10).
Uses ``PLAIT_DATABASE_URL``, else the embedded server under ``.plait/``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import Awaitable, Callable

import uvloop
from _report import machine, median, percentile, write_section
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from overhead import NODES, compiled_spec, describe_server

from plait.engine.store import StepSaver, database_url, migrate, new_checkpointer, open_pool
from plait.engine.store.pool import Pool

Runner = Callable[[], Awaitable[None]]
KINDS = ("non-durable", "in memory", "LangGraph's writes", "Plait's steps")


def runners(pool: Pool) -> dict[str, Runner]:
    """One coroutine factory per way of saving; each call is one run on a new thread."""
    compiled = compiled_spec()

    async def run(saver: BaseCheckpointSaver[str] | None, one_trip: bool) -> None:
        graph = compiled.bind(saver)
        config = {"configurable": {"thread_id": uuid.uuid4().hex}}
        options = {"durability": "sync"} if saver is not None else {}
        held = (
            saver.steps_in_one_trip()
            if isinstance(saver, StepSaver) and one_trip
            else contextlib.nullcontext()
        )
        async with held:
            result = await graph.ainvoke({"count": 0}, config, **options)
        assert result["count"] == NODES, result

    async def bare() -> None:
        await run(None, False)

    async def in_memory() -> None:
        await run(InMemorySaver(), False)

    async def langgraph() -> None:
        await run(AsyncPostgresSaver(pool), False)

    async def steps() -> None:
        await run(new_checkpointer(pool), True)

    return dict(zip(KINDS, (bare, in_memory, langgraph, steps), strict=True))


async def measure(
    contenders: dict[str, Runner], runs: int, concurrency: int
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Milliseconds per step of each round of each contender, rotated every round, and
    each contender's client CPU milliseconds per step over all its rounds."""
    names = list(contenders)
    times: dict[str, list[float]] = {name: [] for name in names}
    cpu = dict.fromkeys(names, 0.0)
    for index in range(runs):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            start, start_cpu = time.perf_counter(), time.process_time()
            await asyncio.gather(*(contenders[name]() for _ in range(concurrency)))
            times[name].append((time.perf_counter() - start) * 1000 / (NODES * concurrency))
            cpu[name] += time.process_time() - start_cpu
    steps = runs * concurrency * NODES
    return times, {name: spent * 1000 / steps for name, spent in cpu.items()}


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="rounds of each contender")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=1, help="runs at once per round")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    args = parser.parse_args()

    load = os.getloadavg()
    async with await open_pool(database_url(), max_size=max(10, args.concurrency)) as pool:
        await migrate(pool)
        server = await describe_server(pool)
        contenders = runners(pool)
        await measure(contenders, args.warmup, args.concurrency)
        times, cpu = await measure(contenders, args.runs, args.concurrency)
    base = times[KINDS[0]]
    ratios = {
        name: median([d / b for d, b in zip(times[name], base, strict=True)]) for name in KINDS
    }
    rows = [
        "| per step (ms) | " + " | ".join(KINDS) + " |",
        "|---|---:|---:|---:|---:|",
        "| median | " + " | ".join(f"{median(times[n]):.3f}" for n in KINDS) + " |",
        "| p90 | " + " | ".join(f"{percentile(times[n], 0.9):.3f}" for n in KINDS) + " |",
        "| client CPU per step (ms) | " + " | ".join(f"{cpu[n]:.3f}" for n in KINDS) + " |",
        "| median of paired ratios to non-durable | "
        + " | ".join(f"**{ratios[n]:.2f}**" for n in KINDS)
        + " |",
    ]
    ours = ratios[KINDS[3]]
    body = f"""
Measured {machine()}; {server}; load average {load[0]:.1f} when it started.

Method: `bench/durable_step.py --runs {args.runs} --concurrency {args.concurrency}`:
the Plait-compiled {NODES}-node graph of `overhead.py` without a checkpointer, with
`durability="sync"` and LangGraph's `InMemorySaver` (nothing durable: LangGraph's
own checkpointing), with LangGraph's Postgres write path, and as Plait's runs save
it (`StepSaver`: a step's writes and checkpoint in one statement, docs/decisions.md
86 and 89);
{args.runs} rounds of {args.concurrency} run(s) of each, rotated, after {args.warmup}.

{chr(10).join(rows)}

A durable step as Plait saves it costs **{ours:.2f}x** a non-durable one (goal
<= 3x: {"meets" if ours <= 3 else "misses"} it); with LangGraph's write path
{ratios[KINDS[2]]:.2f}x; LangGraph's checkpointing alone, in memory,
{ratios[KINDS[1]]:.2f}x.
"""
    print(body)
    if not args.no_readme:
        section = "durable-step" if args.concurrency == 1 else "durable-step-concurrent"
        write_section(section, body)


if __name__ == "__main__":
    uvloop.run(main())
