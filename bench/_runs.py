"""Runs of the benchmark graph over HTTP and in-process, and what they cost, for the
benchmarks that compare ``plait serve`` with the floor (``server.py``, ``concurrency.py``).

The graph is the 10-node line of ``overhead.py``; ``serve_bench`` starts a real
``plait serve`` with it (and the one-approval ``park`` graph); ``CpuMeter``
measures the CPU a batch used in this process, a server's process tree and
PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from _serve import plait_serve
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from overhead import NODES, compiled_spec, spec_text

from plait.engine.store.pool import Pool

BENCH = Path(__file__).resolve().parent
PARK_SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {name: park, version: '1.0.0'}
spec:
  state:
    n: {type: integer}
    decision: {type: object}
  nodes:
    ask:
      kind: approval
      action: proceed
      reason: "Run {{ state.n }} waits for a person."
      output: decision
  edges:
    - {from: START, to: ask}
    - {from: ask, to: END}
"""


@dataclass
class Timings:
    """One contender's figures: wall time of the batch, per-run latency, first-event time."""

    wall: float
    latencies: list[float]
    first_events: list[float]

    @property
    def throughput(self) -> float:
        """Runs per second over the batch."""
        return len(self.latencies) / self.wall


async def in_batches(runs: int, concurrency: int, one: Callable[[], Awaitable[float]]) -> Timings:
    """Run ``one`` ``runs`` times, ``concurrency`` at a time; each call returns its latency."""
    latencies: list[float] = []
    remaining = iter(range(runs))

    async def lane() -> None:
        for _ in remaining:
            latencies.append(await one())

    start = time.perf_counter()
    await asyncio.gather(*(lane() for _ in range(concurrency)))
    return Timings(time.perf_counter() - start, latencies, [])


def in_process(pool: Pool, durability: str) -> Callable[[], Awaitable[float]]:
    """One in-process run per call on a new thread with a new ``AsyncPostgresSaver``
    (LangGraph's own: the floor of issue 19); its seconds."""
    compiled = compiled_spec()

    async def one() -> float:
        start = time.perf_counter()
        graph = compiled.bind(AsyncPostgresSaver(pool))
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        result = await graph.ainvoke({"count": 0}, config, durability=durability)
        assert result["count"] == NODES, result
        return time.perf_counter() - start

    return one


def over_http(
    http: aiohttp.ClientSession, first_events: list[float], durability: str
) -> Callable[[], Awaitable[float]]:
    """One run per call: create a thread, stream the run to ``end``; its seconds.

    Time to first event is from sending the run's POST to the first SSE event.
    """

    async def one() -> float:
        start = time.perf_counter()
        async with http.post("/threads", json={}) as response:
            response.raise_for_status()
            thread = await response.json()
        body = {
            "assistant_id": "overhead",
            "input": {"count": 0},
            "stream_mode": ["values"],
            "durability": durability,
        }
        sent = time.perf_counter()
        last: dict[str, object] = {}
        event = ""
        path = f"/threads/{thread['thread_id']}/runs/stream"
        async with http.post(path, json=body) as response:
            response.raise_for_status()
            async for raw in response.content:  # one line at a time
                line = raw.decode().rstrip("\r\n")
                if line.startswith("event:"):
                    if not event:
                        first_events.append(time.perf_counter() - sent)
                    event = line.partition(":")[2].strip()
                elif line.startswith("data:") and event == "values":
                    last = json.loads(line.partition(":")[2])
                if event in ("end", "error") and not line:
                    break
        assert event == "end" and last.get("count") == NODES, (event, last)
        return time.perf_counter() - start

    return one


def client(base: str, concurrency: int) -> aiohttp.ClientSession:
    """The benchmark's HTTP client for a server at ``base``."""
    return aiohttp.ClientSession(
        base_url=base,
        timeout=aiohttp.ClientTimeout(total=120),
        connector=aiohttp.TCPConnector(limit=concurrency * 2),
    )


@contextmanager
def serve_bench(
    url: str, workers: int | None, worker_processes: int = 0
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``plait serve`` with the benchmark's specs on database ``url``; yields (URL, process)."""
    with tempfile.TemporaryDirectory(prefix="plait-bench-") as tmp:
        specs = Path(tmp) / "specs"
        specs.mkdir()
        (specs / "overhead.yaml").write_text(spec_text(), encoding="utf-8")
        (specs / "park.yaml").write_text(PARK_SPEC, encoding="utf-8")
        shutil.copy2(BENCH / "bench_steps.py", specs / "bench_steps.py")
        args = ["--workers", str(workers)] if workers is not None else []
        args += ["--worker-processes", str(worker_processes)]
        env = dict(os.environ, PLAIT_DATABASE_URL=url)
        with plait_serve(specs, *args, env=env) as served:
            yield served


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used (Linux ``/proc``), threads included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int) -> float:
    """:func:`cpu_seconds` of ``pid`` plus its live children (``--worker-processes``)."""
    total = cpu_seconds(pid)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                total += cpu_seconds(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue  # exited meanwhile
    return total


def postgres_cpu_seconds() -> float | None:
    """CPU time used by every ``postgres`` process on this machine (None: none is visible)."""
    total, found = 0.0, False
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "postgres":
                continue
            total += cpu_seconds(int(entry.name))
            found = True
        except (OSError, ValueError, IndexError):
            continue  # exited meanwhile
    return total if found else None


@dataclass
class CpuMeter:
    """CPU per run of this process, a server process tree and Postgres over one batch."""

    server_pid: int | None = None
    own: float = 0.0
    server: float = 0.0
    #: The server process alone, without its worker children (the API's share with
    #: ``--worker-processes``; all of ``server`` without).
    server_alone: float = 0.0
    postgres: float | None = None

    @contextmanager
    def batch(self, runs: int) -> Iterator[None]:
        """Measure the CPU used while the ``with`` block runs ``runs`` runs."""
        own, pg = time.process_time(), postgres_cpu_seconds()
        server = tree_cpu_seconds(self.server_pid) if self.server_pid else 0.0
        alone = cpu_seconds(self.server_pid) if self.server_pid else 0.0
        yield
        self.own = (time.process_time() - own) / runs
        if self.server_pid:
            self.server = (tree_cpu_seconds(self.server_pid) - server) / runs
            self.server_alone = (cpu_seconds(self.server_pid) - alone) / runs
        after = postgres_cpu_seconds()
        self.postgres = None if pg is None or after is None else (after - pg) / runs

    @property
    def total(self) -> float | None:
        """CPU per run of the three together (None when Postgres is not visible)."""
        return None if self.postgres is None else self.own + self.server + self.postgres


#: Tables either contender writes: vacuumed before each measured batch.
VACUUMED = (
    "checkpoints",
    "checkpoint_blobs",
    "checkpoint_writes",
    "plait_threads",
    "plait_runs",
    "plait_run_events",
)


async def vacuum(pool: Pool) -> None:
    """``VACUUM ANALYZE`` what the contenders write, as autovacuum would between batches.

    Without it, the dead rows of earlier runs pile up where autovacuum is off (as on
    this machine's server): the claim query's partial index then holds one dead
    entry per run ever claimed, and later batches measure that, not the server.
    """
    async with pool.connection() as conn:
        await conn.set_autocommit(True)
        for table in VACUUMED:
            await conn.execute(f"VACUUM ANALYZE {table}".encode())


def ms(seconds: float | None) -> str:
    """Seconds as milliseconds with one decimal (``-`` for unknown)."""
    return "-" if seconds is None else f"{seconds * 1000:.1f}"
