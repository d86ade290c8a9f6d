"""One API process, two ``plait worker`` processes, one Postgres: SIGKILL the busy worker.

Each graph calls a tool with a side effect, then blocks in a step that reports
its process id. The test kills that process and releases the block; the other
worker must take the run over once the lease expires and finish it within
30 s, the tool must have run once, and the client's stream must show every
event once, in order, across the takeover.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.schema import StreamPart

from tests.conftest import fresh_database
from tests.integration.server.harness import Cluster, cluster
from tests.integration.server.sdk.helpers import (
    assert_contiguous,
    blocking_input,
    events_named,
    is_waiting,
    log_lines,
    touch,
)

SDK_SPECS = Path(__file__).resolve().parents[1] / "sdk" / "specs"
SOURCES = [SDK_SPECS / "tool_once.yaml", SDK_SPECS / "agent_once.yaml", SDK_SPECS / "sdk_steps.py"]
SIDE_EFFECTS_ENV = "PLAIT_TEST_SIDE_EFFECTS"
TAKEOVER_SECONDS = 30.0
#: Upper bound for the whole test, so a broken takeover fails instead of hanging.
TEST_SECONDS = 120.0

ClusterFactory = Callable[..., Any]


@pytest.fixture
def two_workers(postgres_server_url: str, tmp_path: Path) -> Iterator[ClusterFactory]:
    """``start(worker_args)``: ``plait serve --no-workers`` + two ``plait worker`` processes."""
    with fresh_database(postgres_server_url) as url:

        @contextmanager
        def start(*worker_args: str) -> Iterator[Cluster]:
            with cluster(
                url,
                tmp_path / "cluster",
                SOURCES,
                serve_args=["--no-workers"],
                workers=2,
                worker_args=worker_args,
                extra_env={SIDE_EFFECTS_ENV: str(tmp_path / "agent.log")},
            ) as running:
                yield running

        yield start


@dataclass
class Takeover:
    """What the client saw of a run whose worker was killed mid-run."""

    parts: list[StreamPart]
    run: dict[str, Any]
    takeover_seconds: float


async def kill_mid_run(
    running: Cluster, assistant: str, run_input: dict[str, Any], release_file: Path
) -> Takeover:
    """Stream a run; at its first ``waiting`` event SIGKILL that worker and release the block."""
    parts: list[StreamPart] = []
    killed_at: float | None = None
    async with (
        asyncio.timeout(TEST_SECONDS),
        get_client(url=running.url, api_key=None) as client,
    ):
        thread = await client.threads.create()
        async for part in client.runs.stream(
            thread["thread_id"],
            assistant,
            input=run_input,
            stream_mode=["values", "updates", "custom"],
            stream_resumable=True,
            on_disconnect="continue",
        ):
            parts.append(part)
            if is_waiting(part) and killed_at is None:
                holder = next(w for w in running.workers if w.pid == part.data["pid"])
                holder.kill()
                killed_at = time.monotonic()
                touch(release_file)
        finished_at = time.monotonic()
        run = await client.runs.get(thread["thread_id"], parts[0].data["run_id"])
    assert killed_at is not None, f"the run never blocked: {parts}"
    return Takeover(parts, run, finished_at - killed_at)


def assert_taken_over(running: Cluster, seen: Takeover) -> None:
    """The other worker finished the run in time and the stream has every event once."""
    assert seen.takeover_seconds <= TAKEOVER_SECONDS
    waiting = [p.data["pid"] for p in seen.parts if is_waiting(p)]
    workers = {w.pid: w for w in running.workers}
    assert len(waiting) == 2 and set(waiting) == set(workers), waiting
    assert workers[waiting[0]].process.returncode == -9
    assert workers[waiting[1]].process.poll() is None  # the survivor finished it
    assert_contiguous([p.id for p in seen.parts])
    assert seen.parts[-1].event == "end"
    assert "error" not in [p.event for p in seen.parts]
    assert seen.run["status"] == "success"


async def test_run_continues_after_its_checkpointed_tool_step(
    two_workers: ClusterFactory, tmp_path: Path
) -> None:
    """Killed in the node after the tool node: the default 10 s lease, resumed by checkpoint."""
    run_input = blocking_input(tmp_path)
    with two_workers() as running:
        seen = await kill_mid_run(running, "sdk-tool-once", run_input, tmp_path / "run.release")
        assert_taken_over(running, seen)

    # The tool ran once; the blocking node started twice (once per worker).
    assert log_lines(run_input) == [
        "charge:order-1",
        "wait-started",
        "wait-started",
        "wait-finished",
        "last",
    ]
    updated = [next(iter(u)) for u in events_named(seen.parts, "updates")]
    assert updated == ["pay", "wait", "last"]
    final = events_named(seen.parts, "values")[-1]
    assert final["charged"] == {"charged": "order-1"}
    assert final["steps"] == ["wait-finished", "last"]


async def test_recorded_tool_result_is_reused_inside_a_rerun_node(
    two_workers: ClusterFactory, tmp_path: Path
) -> None:
    """Killed inside the agent node after its first tool call: the rerun reuses the result."""
    log = tmp_path / "agent.log"
    with two_workers("--lease-seconds", "3") as running:
        seen = await kill_mid_run(
            running, "sdk-agent-once", {"request": "charge order-2"}, Path(f"{log}.release")
        )
        assert_taken_over(running, seen)

    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines == ["charge:order-2", "wait-started", "wait-started", "wait-finished"]
    calls = [
        (c["tool"], c.get("reused"), c["status"])
        for c in events_named(seen.parts, "custom")
        if c.get("plait") == "tool_call" and c["tool"] == "charge_order" and "status" in c
    ]
    # Executed by the first worker, then reused by the second when it re-ran the node.
    assert calls == [
        ("charge_order", False, "started"),
        ("charge_order", False, "ok"),
        ("charge_order", True, "ok"),
    ]
    assert events_named(seen.parts, "values")[-1]["answer"] == "Charged and done."
