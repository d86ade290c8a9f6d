"""Per-step overhead of a Plait-compiled graph against the same graph written by hand.

Both graphs are 10 nodes in a line; each node calls ``bench_steps.step`` on a
counter. Both run with ``AsyncPostgresSaver`` (a new saver per run, as Plait
does) on the same database and with the same durability; runs alternate
between the two (order flipped every pair) so drift in the machine or the
database affects both alike. The figure is the median wall time of a run
divided by its 10 steps; the goal is a ratio <= 1.05.

    .venv/bin/python bench/overhead.py [--runs 200] [--durability sync]

Uses ``PLAIT_DATABASE_URL``, else the embedded server under ``.plait/``.
Writes its figures into bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, TypedDict

from _report import machine, median, percentile, write_section
from bench_steps import step
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph

from plait.engine.compiler import CompiledSpec, compile_spec
from plait.engine.spec.loader import parse_spec
from plait.engine.store import database_url, migrate, open_pool
from plait.engine.store.pool import Pool

NODES = 10
Durability = Literal["sync", "async", "exit"]
Runner = Callable[[], Awaitable[None]]


def spec_text(nodes: int = NODES) -> str:
    """The Plait spec of the benchmark graph."""
    lines = [
        "apiVersion: plait/v1",
        "kind: Graph",
        "metadata: {name: overhead, version: '1.0.0'}",
        "spec:",
        "  state:",
        "    count: {type: integer, default: 0}",
        "  nodes:",
    ]
    for i in range(nodes):
        lines += [
            f"    n{i}:",
            "      kind: python",
            "      function: bench_steps:step",
            "      args: {n: state.count}",
            "      output: count",
        ]
    lines.append("  edges:")
    chain = ["START", *(f"n{i}" for i in range(nodes)), "END"]
    lines += [f"    - {{from: {a}, to: {b}}}" for a, b in itertools.pairwise(chain)]
    return "\n".join(lines) + "\n"


class Counter(TypedDict):
    count: int


def hand_written(nodes: int = NODES) -> StateGraph[Counter]:
    """The same graph written directly against LangGraph."""

    async def node(state: Counter) -> dict[str, Any]:
        return {"count": step(state["count"])}

    graph = StateGraph(Counter)
    for i in range(nodes):
        graph.add_node(f"n{i}", node)
    graph.add_edge(START, "n0")
    for i in range(nodes - 1):
        graph.add_edge(f"n{i}", f"n{i + 1}")
    graph.add_edge(f"n{nodes - 1}", END)
    return graph


def compiled_spec() -> CompiledSpec:
    """The benchmark spec (``spec_text``) parsed and compiled by Plait."""
    return compile_spec(
        parse_spec(spec_text(), "overhead.yaml", Path(__file__).with_name("overhead.yaml"))
    )


def runners(pool: Pool | None, durability: Durability) -> dict[str, Runner]:
    """One coroutine factory per contender; each call is one run on a new thread."""
    compiled = compiled_spec()
    hand = hand_written().compile()
    # LangGraph rejects `durability` without a checkpointer.
    options: dict[str, Any] = {"durability": durability} if pool else {}

    async def plait() -> None:
        graph = compiled.bind(AsyncPostgresSaver(pool) if pool else None)
        config = {"configurable": {"thread_id": uuid.uuid4().hex}}
        result = await graph.ainvoke({"count": 0}, config, **options)
        assert result["count"] == NODES, result

    async def langgraph() -> None:
        graph = hand.copy({"checkpointer": AsyncPostgresSaver(pool) if pool else None})
        config = {"configurable": {"thread_id": uuid.uuid4().hex}}
        result = await graph.ainvoke({"count": 0}, config, **options)
        assert result["count"] == NODES, result

    return {"langgraph": langgraph, "plait": plait}


async def describe_server(pool: Pool) -> str:
    """PostgreSQL's version and how we reach it (socket = the embedded server)."""
    async with pool.connection() as conn:
        row = await (await conn.execute("SHOW server_version")).fetchone()
        version = row["server_version"] if row else "?"
        via = "unix socket" if conn.info.host.startswith("/") else f"TCP {conn.info.host}"
    return f"PostgreSQL {version} over {via}"


async def measure(contenders: dict[str, Runner], runs: int, warmup: int) -> dict[str, list[float]]:
    """Per-step milliseconds of every run, contenders interleaved."""
    names = list(contenders)
    for _ in range(warmup):
        for name in names:
            await contenders[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(runs):
        for name in names if i % 2 == 0 else reversed(names):
            start = time.perf_counter()
            await contenders[name]()
            times[name].append((time.perf_counter() - start) * 1000 / NODES)
    return times


def summary(title: str, times: dict[str, list[float]]) -> tuple[str, float]:
    """A markdown table and the headline ratio: the median of per-pair ratios.

    Each Plait run is divided by the hand-written run next to it, so load
    changes during the benchmark (two cores, shared machine) cancel out.
    """
    hand, plait = median(times["langgraph"]), median(times["plait"])
    ratio = median([p / h for p, h in zip(times["plait"], times["langgraph"], strict=True)])
    rows = [
        f"| {title} | hand-written LangGraph | Plait-compiled |",
        "|---|---:|---:|",
        f"| median ms/step | {hand:.3f} | {plait:.3f} |",
        f"| p90 ms/step | {percentile(times['langgraph'], 0.9):.3f} "
        f"| {percentile(times['plait'], 0.9):.3f} |",
        f"| ratio of medians | 1 | {plait / hand:.3f} |",
        f"| median of paired ratios | 1 | **{ratio:.3f}** |",
    ]
    return "\n".join(rows), ratio


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="runs of each graph")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--durability", choices=["sync", "async", "exit"], default="sync")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    args = parser.parse_args()

    async with await open_pool(database_url()) as pool:
        await migrate(pool)
        server = await describe_server(pool)
        with_saver = await measure(runners(pool, args.durability), args.runs, args.warmup)
    without = await measure(runners(None, args.durability), args.runs, args.warmup)

    table, ratio = summary(f"Postgres saver, durability={args.durability}", with_saver)
    bare, bare_ratio = summary("no checkpointer (for reference)", without)
    verdict = "meets" if ratio <= 1.05 else "misses"
    body = f"""
Measured {machine()}; {server}.

Method: `bench/overhead.py --runs {args.runs} --durability {args.durability}`: a
{NODES}-node linear graph, each node `bench_steps.step(count)`; {args.runs} runs of
each graph, interleaved (order flipped every pair) after {args.warmup} warm-up runs
each, a new thread and a new `AsyncPostgresSaver` per run on one psycopg pool.
Per-step time = run wall time / {NODES}. The headline ratio is the median of
the ratios of adjacent runs (Plait / hand-written), robust to load drift.

{table}

Per-step overhead ratio {ratio:.3f}: {verdict} the goal (<= 1.05).

{bare}

Without a checkpointer the ratio is {bare_ratio:.3f}: that is Plait's own per-node work
(CEL arguments and writes, visit bookkeeping) against a bare function, which the
checkpoint write hides in real runs.
"""
    print(body)
    if not args.no_readme:
        write_section("overhead", body)


if __name__ == "__main__":
    asyncio.run(main())
