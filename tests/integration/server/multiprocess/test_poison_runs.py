"""A poison run ends: a step that kills its worker (``os._exit(1)``), three real workers.

``plait serve --worker-processes 3`` runs three ``plait worker`` children and
restarts each one that exits, as a supervisor (Kubernetes, systemd) would. A
run's second step calls ``os._exit(1)`` while a flag file exists: each attempt
kills the worker that claims it. With the default ``max_attempts`` (3), the
fourth claim dead-letters the run instead of running it. What a user checks:

- the client streaming the run gets every attempt's ``metadata``, then an
  ``error`` (``DeadLettered``) and ``end``; the run answers ``status: error``,
  ``plait_status: dead_lettered`` and its ``dead_letter`` (GET and list);
  ``/metrics`` counts it; one structured log line says so;
- exactly three workers died (three crash lines from three pids, three
  restarts in the server's log), and the workers are alive: three listen
  again and a healthy run succeeds;
- once the cause is gone, ``POST .../requeue`` runs it again: the rejoined
  stream goes on with the next seqs to a clean ``end``, the run succeeds from
  its checkpoint, a stream read from the start skips the dead letter's
  ``error`` and ``end``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk.sse import SSEDecoder, aiter_lines_raw

from tests.conftest import fresh_database
from tests.integration.server.harness import Cluster, cluster

pytestmark = pytest.mark.postgres

WORKERS = 3
#: Upper bound for the whole scenario, so a run that never ends fails instead of hanging.
TEST_SECONDS = 150.0
_POLL_SECONDS = 0.1

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata:
  name: poison
  version: "1.0.0"
spec:
  state:
    flag: {type: string}
    log: {type: string}
    steps: {type: list, reducer: append}
  input: [flag, log]
  nodes:
    prepare:
      kind: python
      function: poison_steps:step
      args: {name: "'prepare'"}
      writes: {steps: result}
    crash:
      kind: python
      function: poison_steps:crash
      args: {flag: state.flag, log: state.log}
      writes: {steps: result}
    finish:
      kind: python
      function: poison_steps:step
      args: {name: "'finish'"}
      writes: {steps: result}
  edges:
    - {from: START, to: prepare}
    - {from: prepare, to: crash}
    - {from: crash, to: finish}
    - {from: finish, to: END}
"""

STEPS = '''\
"""Steps of the poison test: one kills its process while a flag file exists."""

from __future__ import annotations

import os
from pathlib import Path


def step(name: str) -> str:
    return name


def crash(flag: str, log: str) -> str:
    """Kill the worker process (no cleanup, no exception) while ``flag`` exists."""
    if Path(flag).exists():
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()}\\n")
        os._exit(1)
    return "crash-survived"
'''


@pytest.fixture
def supervised(postgres_server_url: str, tmp_path: Path) -> Iterator[Cluster]:
    """``plait serve --worker-processes 3`` (2-second leases) on a fresh database."""
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "poison.yaml").write_text(SPEC, encoding="utf-8")
    (sources / "poison_steps.py").write_text(STEPS, encoding="utf-8")
    with (
        fresh_database(postgres_server_url) as url,
        cluster(
            url,
            tmp_path / "cluster",
            [sources / "poison.yaml", sources / "poison_steps.py"],
            serve_args=["--worker-processes", str(WORKERS), "--workers", "2"],
            extra_env={"PLAIT_LEASE_SECONDS": "2"},
        ) as running,
    ):
        yield running


def _listening(serve: Any) -> int:
    """How many worker children have printed their start line so far."""
    return str(serve.log()).count(" started (concurrency")


async def _until(what: str, check: Any) -> None:
    """Poll ``check()`` (state in other processes) until true, within the test's deadline."""
    deadline = time.monotonic() + TEST_SECONDS
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(_POLL_SECONDS)


async def _stream(
    http: httpx.AsyncClient, method: str, path: str, **kwargs: Any
) -> list[tuple[int, str, Any]]:
    """Every frame of an SSE response as (seq, event, data), to its end."""
    frames: list[tuple[int, str, Any]] = []
    async with http.stream(method, path, **kwargs) as response:
        assert response.status_code == 200, await response.aread()
        decoder = SSEDecoder()
        async for line in aiter_lines_raw(response):
            part = decoder.decode(bytes(line).rstrip(b"\n"))
            if part is not None and part.event:
                frames.append((int(part.id or 0), part.event, part.data))
    return frames


def _metric(text: str, name: str) -> float:
    [line] = [line for line in text.splitlines() if line.startswith(f"{name} ")]
    return float(line.split()[1])


def _log_records(text: str, run_id: str) -> list[dict[str, Any]]:
    records = []
    for line in text.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            if record.get("run_id") == run_id:
                records.append(record)
    return records


async def test_a_run_that_kills_its_workers_is_dead_lettered_then_requeued(
    supervised: Cluster, tmp_path: Path
) -> None:
    serve = supervised.processes[0]
    flag, crashes = tmp_path / "poison.flag", tmp_path / "crashes.log"
    flag.touch()
    await _until("three workers to listen", lambda: _listening(serve) == WORKERS)
    async with (
        asyncio.timeout(TEST_SECONDS),
        httpx.AsyncClient(base_url=supervised.url, timeout=TEST_SECONDS) as http,
    ):
        thread_id = (await http.post("/threads", json={})).json()["thread_id"]
        body = {
            "assistant_id": "poison",
            "input": {"flag": str(flag), "log": str(crashes)},
            "stream_mode": ["values"],
            "stream_resumable": True,
        }
        first = await _stream(http, "POST", f"/threads/{thread_id}/runs/stream", json=body)
        run_id = first[0][2]["run_id"]
        base = f"/threads/{thread_id}/runs/{run_id}"
        run = (await http.get(base)).json()
        listed = (await http.get(f"/threads/{thread_id}/runs")).json()
        dead_metrics = (await http.get("/metrics")).text

        # The three deaths, and the workers that came back.
        pids = crashes.read_text(encoding="utf-8").split()
        await _until("the dead workers to be restarted", lambda: _listening(serve) == 2 * WORKERS)
        healthy = await http.post(
            "/runs/wait",
            json={"assistant_id": "poison", "input": {"flag": str(tmp_path / "no"), "log": "-"}},
        )

        flag.unlink()  # the cause is fixed
        requeued = await http.post(f"{base}/requeue")
        rejoined = await _stream(
            http, "GET", f"{base}/stream", headers={"Last-Event-ID": str(first[-1][0])}
        )
        replayed = await _stream(http, "GET", f"{base}/stream")
        done = (await http.get(base)).json()
        journal = (await http.get(f"/runs/{run_id}/events")).json()
        after_metrics = (await http.get("/metrics")).text

    names = [event for _, event, _ in first]
    attempts = [data["attempt"] for _, event, data in first if event == "metadata"]
    assert attempts == [1, 2, 3], first
    assert names[-2:] == ["error", "end"], names
    assert first[-2][2]["error"] == "DeadLettered"
    assert "3 attempts in a row lost their worker" in first[-2][2]["message"]
    assert [seq for seq, _, _ in first] == list(range(1, len(first) + 1))

    assert (run["status"], run["plait_status"]) == ("error", "dead_lettered")
    assert (run["dead_letter"]["attempts"], run["dead_letter"]["max_attempts"]) == (3, 3)
    assert [(r["run_id"], r["plait_status"]) for r in listed] == [(run_id, "dead_lettered")]
    assert listed[0]["dead_letter"] == run["dead_letter"]
    assert _metric(dead_metrics, "plait_runs_dead_lettered") == 1.0
    [line] = [r for r in _log_records(serve.log(), run_id) if r.get("status") == "dead_lettered"]
    assert line["level"] == "ERROR" and line["error_code"] == "DeadLettered", line
    assert (
        line["message"]
        == "run ended: dead_lettered (3 attempts in a row lost their worker, max_attempts 3)"
    )

    assert len(pids) == len(set(pids)) == 3, pids  # each attempt killed the worker that ran it
    assert serve.log().count("exited with 1; starting it again") == 3
    assert healthy.status_code == 200 and healthy.json()["steps"][-1] == "finish", healthy.text

    assert requeued.status_code == 200, requeued.text
    assert (requeued.json()["status"], requeued.json()["dead_letter"]) == ("pending", None)
    assert rejoined[0][0] == first[-1][0] + 1  # the seq goes on
    assert (rejoined[0][1], rejoined[0][2]["attempt"]) == ("metadata", 5)
    assert [event for _, event, _ in rejoined][-1] == "end"
    assert "error" not in [event for _, event, _ in rejoined]
    assert rejoined[-2][2]["steps"] == ["prepare", "crash-survived", "finish"]
    assert (done["status"], done["plait_status"], done["dead_letter"]) == (
        "success",
        "success",
        None,
    )
    assert replayed == first[:-2] + rejoined  # the dead letter's error and end are skipped
    assert [e["seq"] for e in journal] == list(range(1, len(journal) + 1))
    assert [e["seq"] for e in journal if e.get("superseded")] == [first[-2][0], first[-1][0]]
    assert _metric(after_metrics, "plait_runs_dead_lettered") == 0.0
