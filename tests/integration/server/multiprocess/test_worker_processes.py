"""``plait serve --worker-processes 1``: runs execute in a child the server supervises.

A real server process with one child worker on the test database: a run
streamed over HTTP ends with its values, executed by the child (its log line
names the child's pid); SIGTERM to the server stops the child too, and so does
SIGKILL (the child asked the kernel for SIGTERM when its parent dies).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from tests.conftest import fresh_database
from tests.integration.server.harness import Cluster, cluster

pytestmark = pytest.mark.postgres

SDK_SPECS = Path(__file__).resolve().parents[1] / "sdk" / "specs"
SOURCES = [SDK_SPECS / "echo.yaml", SDK_SPECS / "sdk_steps.py"]
WAIT_SECONDS = 30.0


def _children(pid: int) -> list[int]:
    """Live ``plait worker`` children of ``pid`` (Linux ``/proc``); the server's other
    child, the forkserver of its spec-check processes (server/graphs/spec_checks.py), is not one."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited meanwhile
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z" and _is_worker(entry):
            found.append(int(entry.name))
    return found


def _is_worker(process: Path) -> bool:
    try:
        arguments = (process / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"worker" in arguments


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_for(condition: str, check: Callable[[], bool]) -> None:
    """Poll ``check()`` until true, failing after WAIT_SECONDS."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if check():
            return
        # The state is in other processes (/proc, their logs): poll it.
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {condition}")


@pytest.fixture
def served(postgres_server_url: str, tmp_path: Path) -> Iterator[Cluster]:
    with (
        fresh_database(postgres_server_url) as url,
        cluster(url, tmp_path, SOURCES, serve_args=["--worker-processes", "1"]) as running,
    ):
        yield running


def _stream_run(base: str) -> tuple[list[str], dict[str, object]]:
    """Stream an ``sdk-echo`` run to its end: the event names and the last values."""
    events: list[str] = []
    values: dict[str, object] = {}
    with httpx.Client(base_url=base, timeout=WAIT_SECONDS) as http:
        thread = http.post("/threads", json={}).raise_for_status().json()
        body = {"assistant_id": "sdk-echo", "input": {"text": "hi"}, "stream_mode": ["values"]}
        with http.stream("POST", f"/threads/{thread['thread_id']}/runs/stream", json=body) as r:
            r.raise_for_status()
            event = ""
            for line in r.iter_lines():
                if line.startswith("event:"):
                    event = line.partition(":")[2].strip()
                    events.append(event)
                elif line.startswith("data:") and event == "values":
                    values = json.loads(line.partition(":")[2])
    return events, values


def test_a_child_worker_executes_runs_and_stops_with_the_server(served: Cluster) -> None:
    serve = served.processes[0]
    _wait_for("the worker process", lambda: len(_children(serve.pid)) == 1)
    child = _children(serve.pid)[0]

    events, values = _stream_run(served.url)

    assert events[0] == "metadata" and events[-1] == "end", events
    assert values.get("reply") == "Heard you loud and clear.", values
    _wait_for("the child's start line", lambda: f":{child}:" in serve.log())
    serve.stop()  # SIGTERM: the server stops its child, which hands its runs back
    log = serve.log()
    # The child stopped cleanly before the server finished shutting down.
    assert log.index(f":{child}:") < log.index("stopped") < log.index("shutdown complete"), log
    assert not _alive(child), "the worker process outlived the server"


def test_the_child_stops_when_the_server_is_killed(served: Cluster) -> None:
    serve = served.processes[0]
    _wait_for("the worker process", lambda: len(_children(serve.pid)) == 1)
    child = _children(serve.pid)[0]

    serve.kill()  # SIGKILL: no shutdown code runs in the server

    try:
        _wait_for("the orphaned worker to stop", lambda: not _alive(child))
    finally:
        if _alive(child):  # the test failed: leave no orphan behind
            os.kill(child, signal.SIGKILL)


def _samples(text: str) -> dict[str, list[Sample]]:
    """The exposition's samples by family name; fails on a family exposed twice."""
    families: dict[str, list[Sample]] = {}
    for family in text_string_to_metric_families(text):
        assert family.name not in families, f"{family.name} is exposed twice"
        families[family.name] = family.samples
    return families


def test_the_server_s_metrics_count_what_its_children_execute(served: Cluster) -> None:
    # The runs execute in the child: its step and run metrics were counted there, where
    # nothing serves them, and the server's /metrics had none of them.
    serve = served.processes[0]
    _wait_for("the worker process", lambda: len(_children(serve.pid)) == 1)
    for _ in range(2):
        events, _values = _stream_run(served.url)
        assert events[-1] == "end", events

    with httpx.Client(base_url=served.url, timeout=WAIT_SECONDS) as http:
        families = _samples(http.get("/metrics").raise_for_status().text)

    finished = [s for s in families["plait_runs_finished"] if s.labels.get("graph") == "sdk-echo"]
    assert [(s.labels["outcome"], s.value) for s in finished] == [("success", 2.0)]
    steps = [
        s
        for s in families["plait_step_duration_seconds"]
        if s.name.endswith("_count") and s.labels.get("graph") == "sdk-echo"
    ]
    assert steps and all(s.value == 2.0 for s in steps), steps
    # The server's own metrics are still there, beside the children's.
    assert families["plait_sse_streams_open"][0].value == 0.0
    assert families["plait_database_up"][0].value == 1.0
