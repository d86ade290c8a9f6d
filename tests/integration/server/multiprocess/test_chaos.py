"""Chaos: one API process, three ``plait worker`` processes, 200 runs, workers SIGKILLed.

``plait serve --no-workers`` and three ``plait worker --lease-seconds 2``
processes share one fresh database. 200 runs of a four-step graph (two slow
python steps around a tool with a side effect) are created at once. While they
run, a chaos loop waits until the runs have made some more progress (journaled
events), then SIGKILLs a random worker that holds runs and starts a new one in
its place, again and again until every run has ended. Meanwhile an SSE client follows some of the
runs, dropping its connection every few events and rejoining with
``Last-Event-ID``.

What a user checks afterwards:

- every run ended ``success``;
- the tool ran once per run (one line per execution in a shared log), except
  where the worker that ran it was killed between the side effect and the
  recording of its result (then the next worker runs it again: at least once,
  never silently twice);
- every run's journal holds seq 1..N without a gap and ends with ``end``;
- the SSE client saw each followed run's events exactly once, in order, and
  the same events as the journal.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from langgraph_sdk.sse import SSEDecoder, aiter_lines_raw

from tests.conftest import fresh_database
from tests.integration.server.harness import Cluster, PlaitProcess, cluster

RUNS = 200
WORKERS = 3
#: Kills here come every few seconds, far more often than in any real fleet, and
#: every run on a killed worker loses an attempt: with the default of 3 lost
#: attempts in a row, an innocent run that shared three killed workers before it
#: finished a step would be dead-lettered (on a loaded machine, a few of 200).
#: Dead-lettering has its own test (test_poison_runs.py); this one is about survival.
WORKER_ARGS = ("--lease-seconds", "2", "--concurrency", "10", "--max-attempts", "20")
#: A kill after every this many more journaled events (a run journals about 10).
EVENTS_PER_KILL = 50
#: SSE-followed runs, and how many events the client reads before it drops the connection.
FOLLOWED = 12
EVENTS_PER_CONNECTION = 3
#: Upper bound for the whole scenario, so a stuck run fails the test instead of hanging it.
TEST_SECONDS = 240.0
_POLL_SECONDS = 0.05

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata:
  name: chaos
  version: "1.0.0"
spec:
  state:
    order: {type: string}
    log: {type: string}
    charged: {type: object}
    steps: {type: list, reducer: append}
  input: [order, log]
  output: [charged, steps]
  tools:
    charge:
      function: chaos_steps:charge
      description: Charge an order (a side effect that must happen once).
  nodes:
    prepare:
      kind: python
      function: chaos_steps:slow_step
      args: {name: "'prepare'"}
      output: steps
    pay:
      kind: tool
      tool: charge
      args: {log: state.log, order: state.order}
      output: charged
    ship:
      kind: python
      function: chaos_steps:slow_step
      args: {name: "'ship'"}
      output: steps
    notify:
      kind: python
      function: chaos_steps:slow_step
      args: {name: "'notify'"}
      output: steps
  edges:
    - {from: START, to: prepare}
    - {from: prepare, to: pay}
    - {from: pay, to: ship}
    - {from: ship, to: notify}
    - {from: notify, to: END}
"""

STEPS = '''\
"""Steps of the chaos test's graph: slow steps and a tool that logs each execution."""

from __future__ import annotations

import asyncio
import os
from typing import Any

STEP_SECONDS = 0.3


async def slow_step(name: str) -> str:
    """Take a while, so that kills land in the middle of runs."""
    await asyncio.sleep(STEP_SECONDS)
    return name


def charge(log: str, order: str) -> dict[str, Any]:
    """The side effect: one line per real execution (O_APPEND: atomic across processes)."""
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{order} {os.getpid()}\\n".encode())
    finally:
        os.close(fd)
    return {"charged": order}
'''


@pytest.fixture
def chaos_cluster(postgres_server_url: str, tmp_path: Path) -> Iterator[tuple[Cluster, str]]:
    """``plait serve --no-workers`` + three ``plait worker`` processes; (cluster, database URL)."""
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "chaos.yaml").write_text(SPEC, encoding="utf-8")
    (sources / "chaos_steps.py").write_text(STEPS, encoding="utf-8")
    with (
        fresh_database(postgres_server_url) as url,
        cluster(
            url,
            tmp_path / "cluster",
            [sources / "chaos.yaml", sources / "chaos_steps.py"],
            serve_args=["--no-workers"],
            workers=WORKERS,
            worker_args=WORKER_ARGS,
        ) as running,
    ):
        yield running, url


@dataclass(frozen=True)
class Progress:
    """What the runs have done so far, read from the database."""

    ended: int
    events: int
    #: Leased runs per worker pid.
    owners: Counter[int]


class Chaos:
    """Kills a random busy worker each time the runs journaled ``EVENTS_PER_KILL`` more events.

    Progress in journal events grows steadily while runs complete in waves, so
    kills land all through the runs. A kill waits until at least two workers
    listen (restarted ones take seconds to start), so one is left at work.
    """

    def __init__(self, running: Cluster, database_url: str, seed: int) -> None:
        self.running = running
        self.database_url = database_url
        self.random = random.Random(seed)
        self.alive: list[PlaitProcess] = list(running.workers)
        self.kills = 0
        self.killed_pids: set[int] = set()
        #: Runs that more than one worker executed (set when every run has ended).
        self.taken_over = 0

    async def loop(self, run_ids: list[str]) -> None:
        """Kill and restart workers, driven by progress, until every run has ended."""
        async with await psycopg.AsyncConnection.connect(
            self.database_url, autocommit=True
        ) as conn:
            next_kill = EVENTS_PER_KILL
            while (progress := await _progress(conn, run_ids)).ended < len(run_ids):
                if progress.events >= next_kill and self._listening() >= 2:
                    victim = self._busy_worker(progress.owners)
                    if victim is not None:
                        await self._kill_and_restart(victim)
                        next_kill = progress.events + EVENTS_PER_KILL
                # Progress lives in other processes' database writes: poll it.
                await asyncio.sleep(_POLL_SECONDS)
            cursor = await conn.execute(
                "SELECT count(*) FROM plait_runs WHERE attempt > 1 AND run_id = ANY(%s)",
                (run_ids,),
            )
            self.taken_over = int((await cursor.fetchone() or [0])[0])

    def _listening(self) -> int:
        return sum(" started (" in worker.log() for worker in self.alive)

    def _busy_worker(self, owners: Counter[int]) -> PlaitProcess | None:
        busy = [w for w in self.alive if owners.get(w.pid)]
        return self.random.choice(busy) if busy else None

    async def _kill_and_restart(self, victim: PlaitProcess) -> None:
        await asyncio.to_thread(victim.kill)
        self.kills += 1
        self.killed_pids.add(victim.pid)
        self.alive.remove(victim)
        self.alive.append(
            self.running.start(
                f"worker-r{self.kills}",
                "worker",
                "--specs",
                str(self.running.specs_dir),
                *WORKER_ARGS,
            )
        )


async def _progress(conn: psycopg.AsyncConnection[Any], run_ids: list[str]) -> Progress:
    cursor = await conn.execute(
        """
        SELECT
          count(*) FILTER (WHERE status IN ('success', 'error', 'timeout', 'interrupted')),
          array_remove(array_agg(lease_owner) FILTER (WHERE status = 'running'), NULL),
          (SELECT count(*) FROM plait_run_events WHERE run_id = ANY(%(ids)s))
        FROM plait_runs WHERE run_id = ANY(%(ids)s)
        """,
        {"ids": run_ids},
    )
    row = await cursor.fetchone()
    assert row is not None
    ended, owners, events = row
    # Worker ids are host:pid:random (plait.server.workers.worker.default_worker_id).
    pids = Counter(int(owner.split(":")[1]) for owner in owners or [])
    return Progress(int(ended), int(events), pids)


def _why(run: dict[str, Any]) -> dict[str, Any]:
    """What a failed run's record says about its end."""
    keys = ("run_id", "status", "plait_status", "dead_letter", "error")
    return {key: run.get(key) for key in keys}


async def follow(http: httpx.AsyncClient, thread_id: str, run_id: str) -> list[tuple[int, str]]:
    """Every event of a run as (seq, event), reconnecting every few events with Last-Event-ID."""
    seen: list[tuple[int, str]] = []
    while not seen or seen[-1][1] != "end":
        headers = {"Last-Event-ID": str(seen[-1][0])} if seen else {}
        async with http.stream(
            "GET", f"/threads/{thread_id}/runs/{run_id}/stream", headers=headers
        ) as response:
            assert response.status_code == 200, await response.aread()
            decoder = SSEDecoder()
            read = 0
            async for line in aiter_lines_raw(response):
                part = decoder.decode(bytes(line).rstrip(b"\n"))
                if part is None or not part.event:
                    continue
                seen.append((int(part.id or 0), part.event))
                read += 1
                if part.event == "end" or read == EVENTS_PER_CONNECTION:
                    break  # leaving the block drops the connection mid-stream
    return seen


async def create_runs(http: httpx.AsyncClient, log: Path) -> list[tuple[str, str]]:
    """Create ``RUNS`` background runs at once, each on a new thread; (thread_id, run_id) each."""

    async def one(index: int) -> tuple[str, str]:
        thread = (await http.post("/threads", json={})).raise_for_status().json()
        response = await http.post(
            f"/threads/{thread['thread_id']}/runs",
            json={"assistant_id": "chaos", "input": {"order": f"order-{index}", "log": str(log)}},
        )
        return thread["thread_id"], response.raise_for_status().json()["run_id"]

    return list(await asyncio.gather(*(one(i) for i in range(RUNS))))


async def test_runs_survive_workers_killed_at_random(
    chaos_cluster: tuple[Cluster, str], tmp_path: Path
) -> None:
    running, database_url = chaos_cluster
    log = tmp_path / "charges.log"
    seed = random.randrange(1 << 30)
    print(f"chaos seed {seed}")
    chaos = Chaos(running, database_url, seed)
    started = time.monotonic()
    # Idle connections expire before uvicorn's 5 s keep-alive closes them, so the
    # client never sends a request on a connection the server is closing.
    limits = httpx.Limits(max_connections=100, keepalive_expiry=1.0)
    async with (
        asyncio.timeout(TEST_SECONDS),
        httpx.AsyncClient(base_url=running.url, timeout=60.0, limits=limits) as http,
    ):
        created = await create_runs(http, log)
        run_ids = [run_id for _, run_id in created]
        followed = created[:: RUNS // FOLLOWED][:FOLLOWED]
        streams = [asyncio.create_task(follow(http, t, r)) for t, r in followed]
        await chaos.loop(run_ids)
        seen = await asyncio.gather(*streams)

        runs = await asyncio.gather(*(http.get(f"/threads/{t}/runs/{r}") for t, r in created))
        statuses = Counter(response.json()["status"] for response in runs)
        journals = await asyncio.gather(
            *(http.get(f"/runs/{r}/events", params={"limit": 10_000}) for _, r in created)
        )
    print(
        f"{RUNS} runs, {chaos.kills} workers killed and restarted, "
        f"{chaos.taken_over} runs taken over, {time.monotonic() - started:.1f}s"
    )

    # Restarted workers take seconds to start on a busy machine, which bounds the kill rate.
    assert chaos.kills >= 3, f"too few kills to mean anything: {chaos.kills}"
    assert chaos.taken_over >= chaos.kills, "each kill should leave runs to take over"
    failed = [r.json() for r in runs if r.json()["status"] != "success"]
    assert statuses == {"success": RUNS}, (statuses, [_why(run) for run in failed[:5]])

    # Who executed each run's tool call, in order. A call runs again only when the
    # worker that ran it was SIGKILLed after the side effect and before its result
    # was recorded (the at-least-once window no engine can close without the
    # tool's help); a call whose result was recorded is reused, never repeated,
    # and a live worker never repeats a call another live worker made.
    executions: dict[str, list[int]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        order, pid = line.split()
        executions.setdefault(order, []).append(int(pid))
    assert set(executions) == {f"order-{i}" for i in range(RUNS)}
    repeated = {order: pids for order, pids in executions.items() if len(pids) > 1}
    unexplained = {
        order: pids for order, pids in repeated.items() if not set(pids[:-1]) <= chaos.killed_pids
    }
    assert not unexplained, f"tool calls repeated without a kill in between: {unexplained}"
    print(f"{len(repeated)} tool calls re-ran after their worker died before recording them")

    by_run: dict[str, list[tuple[int, str]]] = {}
    for (_, run_id), response in zip(created, journals, strict=True):
        events = response.raise_for_status().json()
        by_run[run_id] = [(event["seq"], event["event"]) for event in events]
        seqs = [seq for seq, _ in by_run[run_id]]
        assert seqs == list(range(1, len(seqs) + 1)), (run_id, seqs)
        assert by_run[run_id][-1][1] == "end", (run_id, by_run[run_id][-3:])
        assert [name for _, name in by_run[run_id]].count("end") == 1

    for (_, run_id), events in zip(followed, seen, strict=True):
        assert events == by_run[run_id], run_id
