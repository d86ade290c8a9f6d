"""deploy/base against real processes: its probes answer 200, its KEDA query counts the queue.

The API is started as the api Deployment starts it (``plait serve
--no-workers``), a worker as the worker Deployment does (``--health-port``).
Three runs are queued while no worker runs: the ScaledObject's query returns 3
on the migrated database; a worker takes them and the count falls to 0.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import yaml

from tests.conftest import fresh_database
from tests.integration.server.harness import Cluster, cluster, free_port

BASE = Path(__file__).resolve().parents[4] / "deploy" / "base"
SDK_SPECS = Path(__file__).resolve().parents[1] / "sdk" / "specs"
QUEUED = 3
DEADLINE_SECONDS = 60.0
_POLL_SECONDS = 0.1


def manifest(name: str) -> dict[str, Any]:
    """One YAML document of deploy/base."""
    loaded = yaml.safe_load((BASE / name).read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def container(deployment: str) -> dict[str, Any]:
    """The one container of a Deployment in deploy/base."""
    spec = manifest(deployment)["spec"]["template"]["spec"]
    (only,) = spec["containers"]
    return dict(only)


def probe_paths(spec: dict[str, Any]) -> set[str]:
    """The HTTP paths of a container's probes."""
    return {
        spec[probe]["httpGet"]["path"]
        for probe in ("readinessProbe", "livenessProbe", "startupProbe")
        if probe in spec
    }


@pytest.fixture
def api_only(postgres_server_url: str, tmp_path: Path) -> Iterator[tuple[Cluster, str]]:
    """``plait serve --no-workers`` on a fresh database, no worker yet; (cluster, URL)."""
    with (
        fresh_database(postgres_server_url) as url,
        cluster(
            url,
            tmp_path / "cluster",
            [SDK_SPECS / "echo.yaml", SDK_SPECS / "sdk_steps.py"],
            serve_args=["--no-workers"],
        ) as running,
    ):
        yield running, url


def queue_depth(database_url: str) -> int:
    """What KEDA's postgresql trigger reads: the ScaledObject's query, run as it is written."""
    (trigger,) = manifest("worker-scaledobject.yaml")["spec"]["triggers"]
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute(trigger["metadata"]["query"]).fetchone()
    assert row is not None
    return int(row[0])


def wait_until(condition: Any, what: str) -> None:
    """Poll ``condition()`` until true, failing after a deadline."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        # The state lives in other processes: poll it.
        time.sleep(_POLL_SECONDS)


def test_probes_answer_and_keda_counts_the_queue(api_only: tuple[Cluster, str]) -> None:
    running, database_url = api_only
    with httpx.Client(base_url=running.url, timeout=10.0) as http:
        for path in probe_paths(container("api-deployment.yaml")):
            assert http.get(path).status_code == 200, path

        assert queue_depth(database_url) == 0
        runs = []
        for i in range(QUEUED):
            thread = http.post("/threads", json={}).raise_for_status().json()
            body = {"assistant_id": "sdk-echo", "input": {"text": f"hi {i}"}}
            created = http.post(f"/threads/{thread['thread_id']}/runs", json=body)
            runs.append(created.raise_for_status().json())
        assert queue_depth(database_url) == QUEUED  # pending, no worker yet

        # A worker started with the Deployment's health flags (on a free local port).
        worker_spec = container("worker-deployment.yaml")
        port = free_port()
        running.start(
            "worker-1",
            "worker",
            "--specs",
            str(running.specs_dir),
            "--health-port",
            str(port),
            "--health-host",
            "127.0.0.1",
        )

        def healthy() -> bool:
            try:
                paths = probe_paths(worker_spec)
                return all(
                    httpx.get(f"http://127.0.0.1:{port}{path}", timeout=2).status_code == 200
                    for path in paths
                )
            except httpx.TransportError:
                return False

        wait_until(healthy, "the worker's /healthz")
        wait_until(lambda: queue_depth(database_url) == 0, "the worker to empty the queue")
        for run in runs:
            got = http.get(f"/threads/{run['thread_id']}/runs/{run['run_id']}").json()
            assert got["status"] == "success", got
        assert httpx.get(f"http://127.0.0.1:{port}/nothing", timeout=2).status_code == 404
