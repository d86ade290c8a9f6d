"""Partitions, not only crashes: one worker's link is cut in the middle of runs, then healed.

The API, three ``plait worker`` processes and PostgreSQL each run on a host of
their own: a network namespace on a bridge (tests/integration/netns.py), so
every byte between them is real TCP over a link the test can cut. Six runs
each call a tool that charges its order once per idempotency key (a second
call with the same key has no effect) and then waits for the test. When every
run waits inside its tool, the worker holding the most runs is cut off. What
a user checks:

- its runs are taken over by the other workers within the lease plus 5 s;
- its late writes are refused: the tool results it records after the heal
  (its tools were let go while it was cut off) are refused by the fence, and
  so is a retry of the step before it could call the tool again, unless its
  heartbeat learned first that the runs are gone; nothing of its attempt after
  the takeover reaches the journal or the checkpoints, and it finishes none of
  its runs; it lives on;
- no journal event is lost or repeated: each run's journal is 1..N with one
  ``end``, and an SSE client following every run saw exactly that;
- the tool, which honours the key, charged each order once, although the
  taken-over calls ran twice.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
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

from tests.integration.netns import Hosts, hosts, postgres_on, wait_for_port
from tests.integration.server.harness import Cluster, PlaitProcess, child_env, prepare_specs

RUNS = 6
LEASE_SECONDS = 3.0
#: How much later than its lease a cut-off worker's run may be taken over.
TAKEOVER_MARGIN_SECONDS = 5.0
#: How long the link stays cut, at least (two leases: well after the takeover).
PARTITION_SECONDS = 2 * LEASE_SECONDS
WORKER_ARGS = ("--lease-seconds", f"{LEASE_SECONDS:g}", "--concurrency", "3")
API_PORT = 8000
#: Upper bound for the whole scenario, so a stuck run fails the test instead of hanging it.
TEST_SECONDS = 110.0
_POLL_SECONDS = 0.05

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata:
  name: partition
  version: "1.0.0"
spec:
  state:
    order: {type: string}
    dir: {type: string}
    charged: {type: object}
    steps: {type: list, reducer: append}
  input: [order, dir]
  tools:
    charge:
      function: partition_steps:charge
      description: Charge an order once per idempotency key, then wait for the test.
  nodes:
    prepare:
      kind: python
      function: partition_steps:step
      args: {name: "'prepare'"}
      writes: {steps: result}
    pay:
      kind: tool
      tool: charge
      args: {order: state.order, dir: state.dir}
      output: charged
      # A failed step is tried again (a dropped connection, say), as specs usually ask.
      retry: {max_attempts: 3, initial_interval: 0.1, jitter: false}
    finish:
      kind: python
      function: partition_steps:step
      args: {name: "'finish'"}
      writes: {steps: result}
  edges:
    - {from: START, to: prepare}
    - {from: prepare, to: pay}
    - {from: pay, to: finish}
    - {from: finish, to: END}
"""

STEPS = '''\
"""Steps of the partition test. The tool honours its idempotency key, as tools with
external effects should: the effect happens once per key, however often it is called."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from plait.engine.governance.current_call import current_call


def step(name: str) -> str:
    return name


def _append(path: Path, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)  # atomic across processes
    try:
        os.write(fd, f"{line}\\n".encode())
    finally:
        os.close(fd)


async def charge(order: str, dir: str) -> dict[str, Any]:
    """Charge once per key (calls.log: every call; effects.log: every charge), then wait
    for ``release-<pid>``, saying ``holding-<order>-<pid>`` and ``returning-<order>-<pid>``."""
    base, pid = Path(dir), os.getpid()
    call = current_call()
    key = call.key if call is not None else None
    assert key, "the gateway gives every recorded call its idempotency key"
    _append(base / "calls.log", f"{order} {pid} {key}")
    try:
        os.close(os.open(base / "ledger" / key, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        pass  # charged before under this key: no second charge
    else:
        _append(base / "effects.log", f"{order} {pid}")
    (base / f"holding-{order}-{pid}").touch()
    # The test creates the file from another process: polling is the portable way to see it.
    while not (base / f"release-{pid}").exists():  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    (base / f"returning-{order}-{pid}").touch()
    return {"charged": order, "by": f"pid-{pid}"}
'''


@dataclass
class Partitioned:
    """The hosts, the processes on them and the database's URL."""

    network: Hosts
    cluster: Cluster
    database_url: str

    @property
    def workers(self) -> list[PlaitProcess]:
        """The three ``plait worker`` processes (hosts w1, w2, w3)."""
        return self.cluster.workers


@pytest.fixture(scope="module")
def partitioned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Partitioned]:
    """PostgreSQL, ``plait serve --no-workers`` and three ``plait worker`` on hosts of their own
    (and a host ``stray`` for a stand-in of a worker's session)."""
    tmp_path = tmp_path_factory.mktemp("partition")
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "partition.yaml").write_text(SPEC, encoding="utf-8")
    (sources / "partition_steps.py").write_text(STEPS, encoding="utf-8")
    specs_dir = prepare_specs(
        tmp_path / "specs", [sources / "partition.yaml", sources / "partition_steps.py"]
    )
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    with (
        hosts(["db", "api", "w1", "w2", "w3", "stray"]) as network,
        postgres_on(network, "db", log_dir / "postgres.log") as url,
    ):
        api = network.addresses["api"]
        running = Cluster(
            url=f"http://{api}:{API_PORT}",
            specs_dir=specs_dir,
            log_dir=log_dir,
            env=child_env(url, specs_dir),
        )
        try:
            serve = running.start(
                "serve",
                *("serve", "--no-workers", "--host", api, "--port", str(API_PORT)),
                *("--specs", str(specs_dir)),
                prefix=network.command("api", []),
            )
            wait_for_port(api, API_PORT, "plait serve", serve.process)
            running.wait_ready()
            for host in ("w1", "w2", "w3"):
                running.start(
                    f"worker-{host}",
                    *("worker", "--specs", str(specs_dir), *WORKER_ARGS),
                    prefix=network.command(host, []),
                )
            yield Partitioned(network, running, url)
        finally:
            running.stop()
            running.print_logs()


async def _until(what: str, check: Any) -> Any:
    """Poll ``check()`` (state of other processes) until truthy, within the test's deadline."""
    deadline = time.monotonic() + TEST_SECONDS
    while not (found := await check() if asyncio.iscoroutinefunction(check) else check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(_POLL_SECONDS)
    return found


async def _follow(http: httpx.AsyncClient, thread_id: str, run_id: str) -> list[tuple[int, str]]:
    """Every event of a run as (seq, event), from its start to ``end`` (from the root host)."""
    seen: list[tuple[int, str]] = []
    async with http.stream("GET", f"/threads/{thread_id}/runs/{run_id}/stream") as response:
        assert response.status_code == 200, await response.aread()
        decoder = SSEDecoder()
        async for line in aiter_lines_raw(response):
            part = decoder.decode(bytes(line).rstrip(b"\n"))
            if part is not None and part.event:
                seen.append((int(part.id or 0), part.event))
    return seen


def _pid_of(worker_id: str | None) -> int | None:
    # Worker ids are host:pid:random (plait.server.workers.worker.default_worker_id).
    return int(worker_id.split(":")[1]) if worker_id else None


async def _owners(conn: psycopg.AsyncConnection[Any], run_ids: list[str]) -> dict[str, int | None]:
    cursor = await conn.execute(
        "SELECT run_id, lease_owner FROM plait_runs WHERE run_id = ANY(%s)", (run_ids,)
    )
    return {run_id: _pid_of(owner) for run_id, owner in await cursor.fetchall()}


def _files(folder: Path, prefix: str) -> dict[str, set[int]]:
    """``<prefix>-<order>-<pid>`` files: the pids seen per order."""
    found: dict[str, set[int]] = {}
    for path in folder.glob(f"{prefix}-*"):
        order, _, pid = path.name.removeprefix(f"{prefix}-").rpartition("-")
        found.setdefault(order, set()).add(int(pid))
    return found


def _json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON records of a live process's log: a last line still being written (no
    newline yet) is left for the next read, which starts from the same offset."""
    complete = text[: text.rfind("\n") + 1]
    return [json.loads(line) for line in complete.splitlines() if line.startswith("{")]


async def test_a_cut_off_worker_is_taken_over_and_its_late_writes_are_refused(
    partitioned: Partitioned, tmp_path: Path
) -> None:
    network, cluster = partitioned.network, partitioned.cluster
    effects = tmp_path / "effects"
    (effects / "ledger").mkdir(parents=True)
    async with (
        asyncio.timeout(TEST_SECONDS),
        httpx.AsyncClient(base_url=cluster.url, timeout=TEST_SECONDS) as http,
        await psycopg.AsyncConnection.connect(partitioned.database_url, autocommit=True) as db,
    ):
        await _until(
            "three workers to listen",
            lambda: all(" started (" in w.log() for w in partitioned.workers),
        )
        created: dict[str, tuple[str, str]] = {}  # order -> (thread, run)
        for index in range(RUNS):
            order = f"order-{index}"
            thread = (await http.post("/threads", json={})).raise_for_status().json()
            run = await http.post(
                f"/threads/{thread['thread_id']}/runs",
                json={"assistant_id": "partition", "input": {"order": order, "dir": str(effects)}},
            )
            created[order] = (thread["thread_id"], run.raise_for_status().json()["run_id"])
        followers = {
            order: asyncio.create_task(_follow(http, thread_id, run_id))
            for order, (thread_id, run_id) in created.items()
        }
        holding = await _until(
            "every run to wait inside its tool",
            lambda: (found := _files(effects, "holding")) and len(found) == RUNS and found,
        )

        # Cut off the worker that holds the most runs.
        victim_pid, _ = Counter(next(iter(pids)) for pids in holding.values()).most_common(1)[0]
        victim = next(w for w in partitioned.workers if w.pid == victim_pid)
        victim_host = victim.name.removeprefix("worker-")
        victim_orders = sorted(order for order, pids in holding.items() if victim_pid in pids)
        victim_runs = [created[order][1] for order in victim_orders]
        log_offset = victim.log_size()
        cut_at = time.monotonic()
        network.cut(victim_host)

        taken_after: dict[str, float] = {}

        async def taken_over() -> bool:
            for run_id, pid in (await _owners(db, victim_runs)).items():
                if pid not in (None, victim_pid) and run_id not in taken_after:
                    taken_after[run_id] = time.monotonic() - cut_at
            return len(taken_after) == len(victim_runs)

        await _until("the cut-off worker's runs to be taken over", taken_over)
        # The takers ran the tool again, with the same key: no second charge.
        await _until(
            "the takers to wait in the tool",
            lambda: all(len(_files(effects, "holding")[o]) == 2 for o in victim_orders),
        )

        # Let the cut-off worker's tools return: it records their results late.
        (effects / f"release-{victim_pid}").touch()
        await _until(
            "the cut-off worker's tools to return",
            lambda: set(_files(effects, "returning")) >= set(victim_orders),
        )
        # A partition outlasts the takeover: the cut-off worker's writes arrive long after.
        await asyncio.sleep(max(0.0, cut_at + PARTITION_SECONDS - time.monotonic()))
        network.heal(victim_host)

        def attempts_ended() -> dict[str, str]:
            """How the cut-off worker's attempts ended, once each has (its last log line)."""
            ended = {
                r["run_id"]: r["status"]
                for r in _json_lines(victim.log(log_offset))
                if r.get("run_id") in victim_runs and str(r.get("message")).startswith("run ended")
            }
            return ended if set(ended) == set(victim_runs) else {}

        # It stops each attempt when a write is refused or its heartbeat says the run is gone.
        ended = await _until("the cut-off worker to end its attempts", attempts_ended)
        healed_at = time.monotonic()
        refused = Counter(
            r["message"].partition(" refused")[0]
            for r in _json_lines(victim.log(log_offset))
            if r.get("status") == "fenced" and r.get("run_id") in victim_runs
        )

        for pid in {w.pid for w in partitioned.workers} - {victim_pid}:
            (effects / f"release-{pid}").touch()
        seen = {order: await task for order, task in followers.items()}
        finished = {
            order: (await http.get(f"/threads/{t}/runs/{r}")).json()
            for order, (t, r) in created.items()
        }
        journals = {
            order: (await http.get(f"/runs/{r}/events", params={"limit": 10_000})).json()
            for order, (_, r) in created.items()
        }
        late_marker = f"pid-{victim_pid}"
        cursor = await db.execute(
            "SELECT result->>'charged' AS ord, result->>'by' AS by FROM plait_tool_results"
        )
        results = {row[0]: row[1] for row in await cursor.fetchall()}
        cursor = await db.execute(
            """
            SELECT (SELECT count(*) FROM checkpoint_blobs
                    WHERE position(convert_to(%(m)s, 'UTF8') IN blob) > 0)
                 + (SELECT count(*) FROM checkpoint_writes
                    WHERE position(convert_to(%(m)s, 'UTF8') IN blob) > 0)
                 + (SELECT count(*) FROM checkpoints
                    WHERE checkpoint::text LIKE '%%' || %(m)s || '%%')
            """,
            {"m": late_marker},
        )
        late_checkpoints = (await cursor.fetchone() or [None])[0]

    charges = Counter(
        line.split()[0] for line in (effects / "effects.log").read_text().splitlines()
    )
    calls = Counter(line.split()[0] for line in (effects / "calls.log").read_text().splitlines())
    keys = {
        order: {
            line.split()[2]
            for line in (effects / "calls.log").read_text().splitlines()
            if line.split()[0] == order
        }
        for order in created
    }
    lost = repeated = 0
    for order, journal in journals.items():
        journaled = [(e["seq"], e["event"]) for e in journal]
        lost += len(set(journaled) - set(seen[order]))
        repeated += len(seen[order]) - len(set(seen[order]))
    takeover = sorted(taken_after.values())
    print(
        f"partition: {len(victim_runs)} of {RUNS} runs on the cut-off worker; takeover "
        f"{takeover[0]:.2f}-{takeover[-1]:.2f}s after the cut (lease {LEASE_SECONDS:g}s); "
        f"link down {healed_at - cut_at:.1f}s; events lost {lost}, repeated {repeated}; "
        f"charges {sum(charges.values())} for {RUNS} orders ({sum(calls.values())} tool calls); "
        f"late writes refused by the fence: {dict(refused)}"
    )

    assert len(victim_runs) >= 2
    assert max(takeover) <= LEASE_SECONDS + TAKEOVER_MARGIN_SECONDS, taken_after
    assert {o: r["status"] for o, r in finished.items()} == {o: "success" for o in created}

    # Nothing is lost or repeated, and the journals hold nothing of the cut-off attempt.
    assert (lost, repeated) == (0, 0), seen
    for order, journal in journals.items():
        assert [e["seq"] for e in journal] == list(range(1, len(journal) + 1)), order
        assert [e["event"] for e in journal].count("end") == 1 and journal[-1]["event"] == "end"
        assert "error" not in [e["event"] for e in journal], (order, journal)
        assert late_marker not in json.dumps(journal), (order, journal)
        attempts = [e["data"]["attempt"] for e in journal if e["event"] == "metadata"]
        assert attempts == ([1, 2] if order in victim_orders else [1]), (order, attempts)
    # Its late tool results and checkpoints were refused; the takers' stand.
    assert late_checkpoints == 0
    assert set(results) == set(created) and late_marker not in results.values(), results
    # Its tools returned while it was cut off, so late writes were sent: the fence refused them.
    assert refused["tool result"] + refused["tool call"] >= 1, refused
    assert set(ended.values()) <= {"lost", "failed"}, ended
    assert victim.process.poll() is None, "the cut-off worker should live on"

    # The tool honours its key: every order charged once, the taken-over ones called twice.
    assert charges == Counter(dict.fromkeys(created, 1)), charges
    assert calls == Counter({o: 2 if o in victim_orders else 1 for o in created}), calls
    assert all(len(k) == 1 for k in keys.values()), keys


STAND_IN = """\
import asyncio
import sys

from plait.engine.store.pool import open_pool
from plait.server.queue.leases import Lease, fenced_transaction
from plait.server.queue.runs import _CLAIM_LOCK


async def main(url: str, run_id: str, owner: str) -> None:
    # A worker's fenced write, and in it the claim lock (a claim's first statement).
    pool = await open_pool(url, max_size=1)
    print("ready", flush=True)
    attempt = int(await asyncio.to_thread(sys.stdin.readline))  # once the test claimed the run
    async with fenced_transaction(pool, Lease(run_id, owner, attempt), "stand-in") as conn:
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_CLAIM_LOCK,))
        print("holding", flush=True)
        await asyncio.Event().wait()


asyncio.run(main(*sys.argv[1:]))
"""


async def test_a_worker_cut_off_inside_a_transaction_holds_nothing_up(
    partitioned: Partitioned, tmp_path: Path
) -> None:
    """Cut off between statements of a transaction, a worker would keep its run's row and the
    claim lock until the link came back; its session ends instead, and work goes on in time.

    The stand-in is a worker's session on host ``stray``: it holds the run it claimed (the
    claim written by the test) in a fenced write and the claim lock, as a worker cut off in
    the middle of a write or a claim does.
    """
    network, cluster = partitioned.network, partitioned.cluster
    effects = tmp_path / "effects"
    (effects / "ledger").mkdir(parents=True)
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN, encoding="utf-8")
    owner = "stray:0:stand-in"
    async with (
        asyncio.timeout(TEST_SECONDS),
        httpx.AsyncClient(base_url=cluster.url, timeout=TEST_SECONDS) as http,
        await psycopg.AsyncConnection.connect(partitioned.database_url, autocommit=True) as db,
    ):

        async def create(order: str) -> tuple[str, str]:
            thread = (await http.post("/threads", json={})).raise_for_status().json()
            run = await http.post(
                f"/threads/{thread['thread_id']}/runs",
                json={"assistant_id": "partition", "input": {"order": order, "dir": str(effects)}},
            )
            return thread["thread_id"], run.raise_for_status().json()["run_id"]

        held_thread, held = await create("held")
        await _until("the run to wait in its tool", lambda: "held" in _files(effects, "holding"))
        command = [sys.executable, str(script), partitioned.database_url, held, owner]
        stand_in = await asyncio.to_thread(
            subprocess.Popen,
            network.command("stray", command),
            env=cluster.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert stand_in.stdin is not None and stand_in.stdout is not None
            assert (await asyncio.to_thread(stand_in.stdout.readline)).strip() == "ready"
            # The stand-in's claim, as claim_runs writes one.
            cursor = await db.execute(
                "UPDATE plait_runs SET lease_owner = %s, attempt = attempt + 1, "
                "lease_expires_at = now() + make_interval(secs => %s) WHERE run_id = %s "
                "RETURNING attempt",
                (owner, LEASE_SECONDS, held),
            )
            stand_in.stdin.write(f"{(await cursor.fetchone() or [0])[0]}\n")
            stand_in.stdin.flush()
            line = await asyncio.to_thread(stand_in.stdout.readline)
            assert line.strip() == "holding", line
            cut_at = time.monotonic()
            network.cut("stray")
            fresh_thread, fresh = await create("fresh")

            waited: dict[str, float] = {}

            async def going_on() -> bool:
                cursor = await db.execute(
                    "SELECT run_id, status, lease_owner FROM plait_runs WHERE run_id = ANY(%s)",
                    ([held, fresh],),
                )
                for run_id, status, lease_owner in await cursor.fetchall():
                    moved = status == "running" and lease_owner not in (None, owner)
                    if moved and run_id not in waited:
                        waited[run_id] = time.monotonic() - cut_at
                return len(waited) == 2

            await _until("the held run to be taken over and the new one claimed", going_on)
        finally:
            network.heal("stray")
            stand_in.kill()
            stand_in.wait()
        for worker in partitioned.workers:
            (effects / f"release-{worker.pid}").touch()
        ended = {}
        for thread_id, run_id in ((held_thread, held), (fresh_thread, fresh)):
            await http.get(f"/threads/{thread_id}/runs/{run_id}/join")
            ended[run_id] = (await http.get(f"/threads/{thread_id}/runs/{run_id}")).json()
    print(
        f"cut off inside a transaction: run taken over after {waited[held]:.2f}s, a new run "
        f"claimed after {waited[fresh]:.2f}s (lease {LEASE_SECONDS:g}s)"
    )

    assert max(waited.values()) <= LEASE_SECONDS + TAKEOVER_MARGIN_SECONDS, waited
    assert {run_id: run["status"] for run_id, run in ended.items()} == {
        held: "success",
        fresh: "success",
    }
