"""Load on one ``plait serve``: many SSE streams, many concurrent runs, a wide map.

1. Streams: ``--streams`` clients each open ``POST /runs/stream`` on a graph whose
   one ``llm`` step takes ``--hold`` seconds (the scripted model's ``latency``),
   so every stream stays open that long (keep-alives only) and then gets its
   events and ``end``. Counted: streams that failed (non-200, dropped, no
   ``end``), time to the first event, and the server's RSS.
2. Runs: ``--runs`` ``POST /runs/wait`` at once on a graph of two ``llm`` steps of
   ``--latency`` seconds each (a simulated provider). Latency per run p50/p95,
   throughput, errors, server RSS.
3. Map: one run of a ``map`` over ``--items`` items with ``concurrency``
   ``--map-concurrency``, each item an ``llm`` call of ``--item-latency``
   seconds, against the ideal ``items x latency / concurrency`` (median of
   ``--map-repeats`` runs).

    .venv/bin/python bench/load.py [--quick] [--workers 1000] [--no-readme]

``--quick`` runs each part small (a smoke test of a few seconds).
Uses ``PLAIT_DATABASE_URL``, else the embedded server under ``.plait/``; the
server runs its runs in-process (``--workers``). Writes its figures into
bench/README.md (``--no-readme`` prints only).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from _report import machine, median, percentile, write_section
from _serve import plait_serve

#: How often the server's memory is sampled while a part runs.
RSS_SAMPLE_SECONDS = 0.5

HOLD_SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {{name: load-hold, version: "1.0.0"}}
spec:
  state:
    answer: {{type: string}}
  models:
    slow: {{provider: scripted, script: [{{content: "held", latency: {hold}}}]}}
  nodes:
    think: {{kind: llm, model: slow, prompt: "Hold the stream open.", output: answer}}
  edges:
    - {{from: START, to: think}}
    - {{from: think, to: END}}
"""

RUNS_SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {{name: load-runs, version: "1.0.0"}}
spec:
  state:
    question: {{type: string}}
    plan: {{type: string}}
    answer: {{type: string}}
  input: [question]
  models:
    provider: {{provider: scripted, script: [{{content: "a reply", latency: {latency}}}]}}
  nodes:
    plan: {{kind: llm, model: provider, prompt: "Plan: {{{{ state.question }}}}", output: plan}}
    answer: {{kind: llm, model: provider, prompt: "Answer: {{{{ state.plan }}}}", output: answer}}
  edges:
    - {{from: START, to: plan}}
    - {{from: plan, to: answer}}
    - {{from: answer, to: END}}
"""

MAP_SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {{name: load-map, version: "1.0.0"}}
spec:
  state:
    items: {{type: list}}
    results: {{type: list}}
  input: [items]
  models:
    provider: {{provider: scripted, script: [{{content: "done", latency: {latency}}}]}}
  nodes:
    each:
      kind: map
      items: state.items
      do: {{kind: llm, model: provider, prompt: "Item {{{{ item }}}}"}}
      concurrency: {concurrency}
      output: results
  edges:
    - {{from: START, to: each}}
    - {{from: each, to: END}}
"""


@dataclass(frozen=True)
class Sizes:
    """How big each part is."""

    streams: int
    hold: float
    runs: int
    latency: float
    items: int
    map_concurrency: int
    item_latency: float
    map_repeats: int


FULL = Sizes(500, 60.0, 1000, 0.5, 1000, 100, 0.2, 3)
QUICK = Sizes(50, 3.0, 100, 0.2, 100, 10, 0.05, 1)


@dataclass
class Memory:
    """The server's RSS: before a part, its peak while it ran, and after."""

    before: float = 0.0
    peak: float = 0.0
    after: float = 0.0


@dataclass
class StreamResult:
    """The streams part."""

    first_events: list[float] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    memory: Memory = field(default_factory=Memory)


@dataclass
class RunsResult:
    """The concurrent-runs part."""

    wall: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    memory: Memory = field(default_factory=Memory)


@dataclass
class MapResult:
    """The map part."""

    walls: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    memory: Memory = field(default_factory=Memory)


def rss_mib(pid: int) -> float:
    """Resident memory of process ``pid`` in MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@asynccontextmanager
async def watching(pid: int, memory: Memory) -> AsyncIterator[None]:
    """Sample the server's RSS while the block runs (peak), and before and after it."""
    memory.before = memory.peak = rss_mib(pid)

    async def sample() -> None:
        while True:
            memory.peak = max(memory.peak, rss_mib(pid))
            await asyncio.sleep(RSS_SAMPLE_SECONDS)

    sampler = asyncio.create_task(sample())
    try:
        yield
    finally:
        sampler.cancel()
        memory.after = rss_mib(pid)
        memory.peak = max(memory.peak, memory.after)


async def one_stream(http: httpx.AsyncClient, result: StreamResult) -> None:
    """Open one stream on ``load-hold`` and read it to ``end``."""
    body = {"assistant_id": "load-hold", "input": {}, "stream_mode": ["values"]}
    started = time.perf_counter()
    first: float | None = None
    last_event = ""
    try:
        async with http.stream("POST", "/runs/stream", json=body) as response:
            if response.status_code != 200:
                result.errors.append(f"HTTP {response.status_code}")
                return
            async for line in response.aiter_lines():
                if line.startswith("event:"):
                    last_event = line.partition(":")[2].strip()
                    if first is None:
                        first = time.perf_counter() - started
    except httpx.HTTPError as exc:
        result.errors.append(f"{type(exc).__name__}: {exc}")
        return
    if last_event != "end":
        result.errors.append(f"stream ended after {last_event!r}, not 'end'")
        return
    result.first_events.append(first or 0.0)
    result.durations.append(time.perf_counter() - started)


async def streams_part(base: str, pid: int, sizes: Sizes) -> StreamResult:
    """``sizes.streams`` streams at once, each open for ``sizes.hold`` seconds."""
    result = StreamResult()
    limits = httpx.Limits(max_connections=sizes.streams + 10)
    timeout = httpx.Timeout(sizes.hold + 120.0, connect=30.0)
    async with (
        httpx.AsyncClient(base_url=base, limits=limits, timeout=timeout) as http,
        watching(pid, result.memory),
    ):
        await asyncio.gather(*(one_stream(http, result) for _ in range(sizes.streams)))
    return result


async def one_run(http: httpx.AsyncClient, index: int, result: RunsResult) -> None:
    """One ``POST /runs/wait`` on ``load-runs``."""
    body = {"assistant_id": "load-runs", "input": {"question": f"question {index}"}}
    started = time.perf_counter()
    try:
        response = await http.post("/runs/wait", json=body)
    except httpx.HTTPError as exc:
        result.errors.append(f"{type(exc).__name__}: {exc}")
        return
    if response.status_code != 200 or response.json().get("answer") != "a reply":
        result.errors.append(f"HTTP {response.status_code}: {response.text[:200]}")
        return
    result.latencies.append(time.perf_counter() - started)


async def runs_part(base: str, pid: int, sizes: Sizes) -> RunsResult:
    """``sizes.runs`` runs at once, each two model calls of ``sizes.latency`` seconds."""
    result = RunsResult()
    limits = httpx.Limits(max_connections=sizes.runs + 10)
    timeout = httpx.Timeout(600.0, connect=30.0)
    async with (
        httpx.AsyncClient(base_url=base, limits=limits, timeout=timeout) as http,
        watching(pid, result.memory),
    ):
        started = time.perf_counter()
        await asyncio.gather(*(one_run(http, i, result) for i in range(sizes.runs)))
        result.wall = time.perf_counter() - started
    return result


async def map_part(base: str, pid: int, sizes: Sizes) -> MapResult:
    """One map run over ``sizes.items`` items, ``sizes.map_repeats`` times."""
    result = MapResult()
    body = {"assistant_id": "load-map", "input": {"items": list(range(sizes.items))}}
    async with (
        httpx.AsyncClient(base_url=base, timeout=600.0) as http,
        watching(pid, result.memory),
    ):
        for _ in range(sizes.map_repeats):
            started = time.perf_counter()
            try:
                response = await http.post("/runs/wait", json=body)
            except httpx.HTTPError as exc:  # counted like the other parts' errors
                result.errors.append(f"{type(exc).__name__}: {exc}")
                continue
            wall = time.perf_counter() - started
            results = response.json().get("results") if response.status_code == 200 else None
            if not isinstance(results, list) or len(results) != sizes.items:
                result.errors.append(f"HTTP {response.status_code}: {response.text[:200]}")
                continue
            result.walls.append(wall)
    return result


def write_specs(folder: Path, sizes: Sizes) -> None:
    """The three graphs, sized for this bench."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "load-hold.yaml").write_text(HOLD_SPEC.format(hold=sizes.hold), encoding="utf-8")
    (folder / "load-runs.yaml").write_text(
        RUNS_SPEC.format(latency=sizes.latency), encoding="utf-8"
    )
    (folder / "load-map.yaml").write_text(
        MAP_SPEC.format(latency=sizes.item_latency, concurrency=sizes.map_concurrency),
        encoding="utf-8",
    )


def describe_server() -> str:
    """The PostgreSQL server's version, or where it runs."""
    url = os.environ.get("PLAIT_DATABASE_URL")
    if not url:
        return "embedded PostgreSQL (.plait/)"
    try:
        out = subprocess.run(
            ["psql", url, "-Atc", "SHOW server_version"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return f"PostgreSQL {out.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):
        return "PostgreSQL (PLAIT_DATABASE_URL)"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def report(
    sizes: Sizes,
    workers: int,
    streams: StreamResult,
    runs: RunsResult,
    mapped: MapResult,
    load: str,
) -> str:
    """The README section."""
    ok_streams = len(streams.durations)
    ok_runs = len(runs.latencies)
    ideal_runs = 2 * sizes.latency
    ideal_map = sizes.items * sizes.item_latency / sizes.map_concurrency
    map_wall = median(mapped.walls) if mapped.walls else float("nan")
    lines = [
        f"Measured {machine()}; {describe_server()}; load average {load} when it started",
        "(2 cores shared with other engineers' tests and benches: the figures are noisy and",
        "pessimistic; re-run on a quiet machine for release figures).",
        "",
        f"Method: `bench/load.py --workers {workers}`: one `plait serve` with in-process",
        f"workers (`--workers {workers}`), the client (httpx, one asyncio process) on the same",
        "machine. Model calls use the scripted provider's `latency` (a simulated provider).",
        "",
        "| part | size | errors | p50 | p95 | server RSS before / peak / after (MiB) |",
        "|---|---|---:|---:|---:|---|",
        f"| SSE streams held open | {sizes.streams} streams x {sizes.hold:g} s"
        f" | **{len(streams.errors)}** | first event {_ms(_p(streams.first_events, 0.5))} ms"
        f" | first event {_ms(_p(streams.first_events, 0.95))} ms"
        f" | {_mem(streams.memory)} |",
        f"| concurrent runs (`/runs/wait`) | {sizes.runs} runs x 2 model calls of"
        f" {sizes.latency:g} s | **{len(runs.errors)}** | {_p(runs.latencies, 0.5):.2f} s"
        f" | {_p(runs.latencies, 0.95):.2f} s | {_mem(runs.memory)} |",
        f"| map | {sizes.items} items, concurrency {sizes.map_concurrency}, item"
        f" {sizes.item_latency:g} s | **{len(mapped.errors)}** | {map_wall:.2f} s"
        f" (median of {len(mapped.walls)}) | - | {_mem(mapped.memory)} |",
        "",
        f"- Streams: {ok_streams}/{sizes.streams} read to `end`; each was open"
        f" {_p(streams.durations, 0.5):.1f} s (p50), {_p(streams.durations, 0.95):.1f} s (p95)"
        f" for a {sizes.hold:g} s hold (starting {sizes.streams} runs at once takes the rest)."
        f" Memory per open stream with its running run (peak - before) / streams:"
        f" **{_per(streams.memory, sizes.streams)} KiB**.",
        f"- Runs: {ok_runs}/{sizes.runs} succeeded in {runs.wall:.1f} s"
        f" ({ok_runs / runs.wall if runs.wall else 0:.0f} runs/s); the ideal latency of one"
        f" run is {ideal_runs:g} s (its two model calls), so the p50 above is"
        f" {_p(runs.latencies, 0.5) / ideal_runs:.1f}x the ideal. The worker takes runs"
        " beyond its first 10 only while its core has room (server/workers/admission.py),"
        " up to `--workers`; the others wait in the queue, so latency counts that wait:"
        " read the throughput.",
        f"- Map: ideal {sizes.items} x {sizes.item_latency:g} s / {sizes.map_concurrency}"
        f" = {ideal_map:.2f} s; measured {map_wall:.2f} s:"
        f" **{map_wall / ideal_map:.2f}x the ideal**.",
    ]
    errors = streams.errors + runs.errors + mapped.errors
    if errors:
        lines.append(f"- First errors: {'; '.join(sorted(set(errors))[:3])}")
    return "\n".join(lines)


def _p(values: list[float], fraction: float) -> float:
    return percentile(values, fraction) if values else float("nan")


def _mem(memory: Memory) -> str:
    return f"{memory.before:.0f} / {memory.peak:.0f} / {memory.after:.0f}"


def _per(memory: Memory, count: int) -> str:
    return f"{(memory.peak - memory.before) * 1024 / count:.1f}"


async def run_parts(
    base: str, pid: int, sizes: Sizes
) -> tuple[StreamResult, RunsResult, MapResult]:
    """The three parts, one after the other."""
    print(f"streams: {sizes.streams} x {sizes.hold:g}s ...", flush=True)
    streams = await streams_part(base, pid, sizes)
    print(f"  errors {len(streams.errors)}, RSS {_mem(streams.memory)} MiB", flush=True)
    print(f"runs: {sizes.runs} at once ...", flush=True)
    runs = await runs_part(base, pid, sizes)
    print(f"  errors {len(runs.errors)}, wall {runs.wall:.1f}s", flush=True)
    print(f"map: {sizes.items} items ...", flush=True)
    mapped = await map_part(base, pid, sizes)
    print(f"  errors {len(mapped.errors)}, walls {mapped.walls}", flush=True)
    return streams, runs, mapped


def main() -> None:
    """Parse options, run the three parts against a fresh ``plait serve``, report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--workers", type=int, default=1000, help="the server's --workers")
    parser.add_argument("--streams", type=int, help="SSE streams (default 500)")
    parser.add_argument("--hold", type=float, help="seconds each stream stays open (default 60)")
    parser.add_argument("--runs", type=int, help="concurrent runs (default 1000)")
    parser.add_argument("--items", type=int, help="map items (default 1000)")
    parser.add_argument("--no-readme", action="store_true", help="print, do not touch README")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    sizes = Sizes(
        streams=args.streams or sizes.streams,
        hold=args.hold or sizes.hold,
        runs=args.runs or sizes.runs,
        latency=sizes.latency,
        items=args.items or sizes.items,
        map_concurrency=sizes.map_concurrency,
        item_latency=sizes.item_latency,
        map_repeats=sizes.map_repeats,
    )
    load = f"{os.getloadavg()[0]:.1f}"
    work = Path(tempfile.mkdtemp(prefix="plait-load-"))
    try:
        specs = work / "specs"
        write_specs(specs, sizes)
        with plait_serve(specs, "--workers", str(args.workers)) as (base, process):
            streams, runs, mapped = asyncio.run(run_parts(base, process.pid, sizes))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    body = report(sizes, args.workers, streams, runs, mapped, load)
    print(body)
    if not args.no_readme and not args.quick:
        write_section("load", body)


if __name__ == "__main__":
    main()
