"""Traces, metrics and logs of a real ``plait serve`` process, checked from outside.

The server exports spans over OTLP/HTTP to a receiver in the test, serves
``/metrics`` scraped over HTTP, and writes JSON log lines to its stderr (a
file here), which the test parses. Every graph runs offline.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import fresh_database
from tests.integration.observability.otlp_receiver import ReceivedSpan, Receiver, otlp_receiver
from tests.integration.server.api.conftest import parse_sse
from tests.integration.server.harness import REPO, Cluster, cluster, free_port

HERE = Path(__file__).parent
SOURCES = [
    REPO / "specs" / "planner-team.yaml",
    REPO / "specs" / "refund-approval.yaml",
    REPO / "specs" / "plait_examples",
    HERE / "specs" / "obs-gate.yaml",
    HERE / "specs" / "obs-fail.yaml",
    HERE / "specs" / "obs_fns.py",
]
PLANNER_INPUT = {"goal": "Ship the CSV export feature", "start": "2026-12-07"}
REFUND_HIGH = {"order_id": "A-1002", "amount": 180.0, "reason": "Item arrived broken"}
#: Upper bound for waiting on another process (a run's end, a metric to change).
WAIT_SECONDS = 30.0


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as found:
        yield found


@pytest.fixture(scope="module")
def server(
    postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory, receiver: Receiver
) -> Iterator[Cluster]:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
        "OTEL_SERVICE_NAME": "plait-under-test",
        "OTEL_BSP_SCHEDULE_DELAY": "50",  # export within 50 ms, not the default 5 s
        "PLAIT_LOG_FORMAT": "json",
    }
    with (
        fresh_database(postgres_server_url) as url,
        cluster(
            url,
            tmp_path_factory.mktemp("obs"),
            SOURCES,
            serve_args=["--workers", "4"],
            extra_env=env,
        ) as running,
    ):
        yield running


@pytest.fixture
def http(server: Cluster) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=WAIT_SECONDS) as client:
        yield client


def new_thread(http: httpx.Client) -> str:
    response = http.post("/threads", json={})
    assert response.status_code == 200, response.text
    return str(response.json()["thread_id"])


def stream_run(http: httpx.Client, thread_id: str, assistant: str, payload: Any) -> list[Any]:
    response = http.post(
        f"/threads/{thread_id}/runs/stream",
        json={"assistant_id": assistant, "input": payload, "stream_mode": ["updates"]},
    )
    assert response.status_code == 200, response.text
    frames, _ = parse_sse(response.text)
    return frames


def scrape(http: httpx.Client) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """``/metrics`` as {(sample name, labels): value}."""
    response = http.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    """One sample's value (0 when absent: a counter not incremented yet)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def wait_until(condition: Any, what: str) -> Any:
    """Poll ``condition()`` until it returns something truthy; fail after WAIT_SECONDS."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        # The condition is in another process: no event to await, a bounded poll.
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def by_name(spans: list[ReceivedSpan], prefix: str) -> list[ReceivedSpan]:
    return sorted((s for s in spans if s.name.startswith(prefix)), key=lambda s: s.start_ns)


def test_a_run_is_one_trace_with_genai_spans_and_journal_seqs(
    http: httpx.Client, receiver: Receiver
) -> None:
    thread_id = new_thread(http)
    frames = stream_run(http, thread_id, "planner-team", PLANNER_INPUT)
    assert frames[0].event == "metadata"
    run_id = frames[0].data["run_id"]
    trace_id = frames[0].data["trace_id"]
    assert trace_id == uuid.UUID(run_id).hex
    assert frames[-1].event == "end"
    # The run's metadata names its trace too (W3C traceparent of the run span).
    run = http.get(f"/threads/{thread_id}/runs/{run_id}").json()
    assert run["status"] == "success"
    assert run["metadata"]["plait_trace_id"] == trace_id
    assert run["metadata"]["plait_traceparent"].startswith(f"00-{trace_id}-")

    def complete(spans: list[ReceivedSpan]) -> bool:
        return len(by_name(spans, "step ")) == 5 and bool(by_name(spans, "run "))

    spans = receiver.wait_for(complete, trace_id)
    [root] = by_name(spans, "run ")
    assert root.service == "plait-under-test"
    assert root.parent_span_id == ""
    assert root.attributes["plait.run_id"] == run_id
    assert root.attributes["plait.thread_id"] == thread_id
    assert root.attributes["plait.graph"] == "planner-team"
    assert root.attributes["plait.run.status"] == "success"
    assert run["metadata"]["plait_traceparent"] == f"00-{trace_id}-{root.span_id}-01"

    steps = by_name(spans, "step ")
    assert [s.attributes["plait.node"] for s in steps] == [
        "planner",
        "executor",
        "reviewer",
        "executor",
        "reviewer",
    ]
    assert {s.parent_span_id for s in steps} == {root.span_id}
    assert all(s.attributes["plait.run_id"] == run_id for s in steps)
    # Each step span carries the seq of the `updates` event that journaled its update.
    journaled = [
        (node, int(frame.id))
        for frame in frames
        if frame.event == "updates"
        for node in frame.data
        if not node.startswith("__")
    ]
    assert [(s.attributes["plait.node"], s.attributes["plait.journal.seq"]) for s in steps] == (
        journaled
    )

    step_ids = {s.span_id for s in steps}
    chats = by_name(spans, "chat ")
    assert len(chats) >= 5 and {c.parent_span_id for c in chats} <= step_ids
    for chat in chats:
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.provider.name"] == "scripted"
        assert chat.attributes["gen_ai.request.model"] in ("planner", "executor", "reviewer")
        assert chat.attributes["gen_ai.usage.input_tokens"] > 0
        assert chat.attributes["gen_ai.usage.output_tokens"] > 0
    tools = by_name(spans, "execute_tool ")
    assert Counter(t.attributes["gen_ai.tool.name"] for t in tools) == {
        "estimate_tasks": 1,
        "schedule": 2,
    }
    assert all(t.attributes["gen_ai.operation.name"] == "execute_tool" for t in tools)
    assert {t.parent_span_id for t in tools} <= {
        s.span_id for s in steps if s.attributes["plait.node"] == "executor"
    }


def test_metrics_count_runs_steps_tools_and_tokens(http: httpx.Client) -> None:
    before = scrape(http)
    thread_id = new_thread(http)
    frames = stream_run(http, thread_id, "planner-team", PLANNER_INPUT)
    assert frames[-1].event == "end"

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    # The worker counts the attempt once it has recorded the run's end, a moment
    # after the client sees ``end``: wait for that scrape, then read the rest from it.
    finished = {"graph": "planner-team", "outcome": "success"}

    def counted() -> dict[tuple[str, frozenset[tuple[str, str]]], float] | None:
        now = scrape(http)
        ended = value(now, "plait_runs_finished_total", **finished)
        return now if ended > value(before, "plait_runs_finished_total", **finished) else None

    after = wait_until(counted, "the run's end to be counted")
    assert value(after, "plait_runs", status="success") >= 1
    assert delta("plait_runs", status="success") == 1
    assert value(after, "plait_queue_depth") == 0
    assert value(after, "plait_queue_oldest_pending_age_seconds") == 0
    step = {"graph": "planner-team", "node": "executor", "status": "ok"}
    assert delta("plait_step_duration_seconds_count", **step) == 2
    # Histogram buckets: every step is below the largest finite bucket and in +Inf.
    assert delta("plait_step_duration_seconds_bucket", **step, le="+Inf") == 2
    assert delta("plait_step_duration_seconds_bucket", **step, le="300.0") == 2
    assert delta("plait_tool_calls_total", tool="schedule", outcome="success") == 2
    assert delta("plait_tool_calls_total", tool="estimate_tasks", outcome="success") == 1
    tokens = {"model": "executor", "provider": "scripted"}
    assert delta("plait_model_tokens_total", **tokens, direction="input") > 0
    assert delta("plait_model_tokens_total", **tokens, direction="output") > 0
    assert delta("plait_model_calls_total", **tokens, outcome="success") >= 3
    assert delta("plait_runs_finished_total", **finished) == 1


def test_approvals_are_counted_and_the_resume_links_to_the_parked_trace(
    http: httpx.Client, receiver: Receiver
) -> None:
    before = scrape(http)
    thread_id = new_thread(http)
    parked = http.post(
        f"/threads/{thread_id}/runs/wait",
        json={"assistant_id": "refund-approval", "input": REFUND_HIGH},
    )
    assert parked.json()["__interrupt__"]
    pending = scrape(http)
    assert value(pending, "plait_approvals", status="pending") == (
        value(before, "plait_approvals", status="pending") + 1
    )
    inbox = http.get("/approvals", params={"status": "pending"}).json()
    [approval] = [item for item in inbox if item["thread_id"] == thread_id]
    decided = http.post(
        f"/approvals/{approval['approval_id']}/decision", json={"decision": "approve"}
    )
    assert decided.status_code == 200, decided.text
    resume_id = decided.json()["run"]["run_id"]  # the run that resumes the thread
    wait_until(
        lambda: http.get(f"/threads/{thread_id}").json()["status"] == "idle", "the resume to end"
    )
    after = scrape(http)
    assert value(after, "plait_approvals", status="approved") == (
        value(before, "plait_approvals", status="approved") + 1
    )
    waited = value(after, "plait_approval_wait_seconds_count") - value(
        before, "plait_approval_wait_seconds_count"
    )
    assert waited == 1
    assert value(after, "plait_approval_wait_seconds_sum") > value(
        before, "plait_approval_wait_seconds_sum"
    )

    runs = http.get(f"/threads/{thread_id}/runs").json()
    parked_run = next(r for r in runs if r["run_id"] == approval["run_id"])
    resume = next(r for r in runs if r["run_id"] == resume_id)
    assert resume["status"] == "success"
    parked_trace = parked_run["metadata"]["plait_trace_id"]
    resume_trace = resume["metadata"]["plait_trace_id"]
    assert parked_trace != resume_trace  # one trace per run
    [resume_root] = by_name(
        receiver.wait_for(lambda s: bool(by_name(s, "run ")), resume_trace), "run "
    )
    [parked_root] = by_name(receiver.spans(parked_trace), "run ")
    assert resume_root.links == [(parked_trace, parked_root.span_id)]


def test_open_sse_streams_are_a_gauge(http: httpx.Client, server: Cluster) -> None:
    gate = server.log_dir / f"gate-{uuid.uuid4().hex}"
    thread_id = new_thread(http)
    with http.stream(
        "POST",
        f"/threads/{thread_id}/runs/stream",
        json={"assistant_id": "obs-gate", "input": {"path": str(gate)}},
    ) as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        assert "event: metadata" in (next(lines), next(lines))  # `id:` may come first
        # The stream is counted while it is open, and its run is running (not yet claimed
        # for a moment: hence the wait).
        wait_until(
            lambda: (
                (s := scrape(http))
                and value(s, "plait_sse_streams_open") >= 1
                and value(s, "plait_runs", status="running") >= 1
            ),
            "the stream to be counted and its run to run",
        )
        gate.touch()
        rest = "\n".join(lines)
    assert "event: end" in rest
    wait_until(lambda: value(scrape(http), "plait_sse_streams_open") == 0, "the gauge to drop")


def test_json_logs_carry_run_thread_and_trace_ids(
    http: httpx.Client, server: Cluster, receiver: Receiver
) -> None:
    serve = server.processes[0]
    offset = serve.log_size()
    thread_id = new_thread(http)
    frames = stream_run(http, thread_id, "obs-fail", {"reason": "no luck"})
    assert [f.event for f in frames][-2:] == ["error", "end"]
    run_id = frames[0].data["run_id"]

    def lines() -> list[dict[str, Any]]:
        found = []
        for line in serve.log(offset).splitlines():
            if line.startswith("{"):
                record = json.loads(line)
                if record.get("run_id") == run_id:
                    found.append(record)
        return found

    records = wait_until(
        lambda: (found := lines()) and any("run ended" in r["message"] for r in found) and found,
        "the run's log lines",
    )
    for record in records:
        assert record["thread_id"] == thread_id
        assert record["trace_id"] == uuid.UUID(run_id).hex
        assert record["graph"] == "obs-fail"
        assert {"time", "level", "logger", "message"} <= record.keys()
    started = next(r for r in records if r["message"].startswith("run started"))
    assert started["status"] == "running"
    failed = next(r for r in records if r["message"].startswith("step explode failed"))
    assert failed["node"] == "explode"
    assert failed["error_code"] == "ValueError"
    assert failed["level"] == "WARNING"
    ended = next(r for r in records if r["message"].startswith("run ended"))
    assert ended["status"] == "error"
    assert ended["error_code"]
    # The same failure in the trace: the step and the run are errors.
    spans = receiver.wait_for(lambda s: bool(by_name(s, "run ")), uuid.UUID(run_id).hex)
    [step] = by_name(spans, "step explode")
    [root] = by_name(spans, "run ")
    error = 2  # STATUS_CODE_ERROR in OTLP
    assert step.status_code == error and step.attributes["error.type"] == "ValueError"
    assert root.status_code == error and root.attributes["plait.run.status"] == "error"


def test_a_worker_process_serves_its_own_metrics_and_traces(
    postgres_server_url: str, tmp_path: Path, receiver: Receiver
) -> None:
    metrics_port = free_port()
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "50"}
    with (
        fresh_database(postgres_server_url) as url,
        cluster(
            url,
            tmp_path,
            SOURCES,
            serve_args=["--no-workers"],
            workers=1,
            worker_args=["--metrics-port", str(metrics_port)],
            extra_env=env,
        ) as running,
        httpx.Client(base_url=running.url, timeout=WAIT_SECONDS) as http,
    ):
        thread_id = new_thread(http)
        frames = stream_run(http, thread_id, "planner-team", PLANNER_INPUT)
        assert frames[-1].event == "end"
        run_id = frames[0].data["run_id"]

        def worker_metrics() -> str:
            try:
                response = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5)
            except httpx.TransportError:
                return ""
            return response.text if response.status_code == 200 else ""

        text = wait_until(worker_metrics, "the worker's metrics endpoint")
        samples = {
            (s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }
        step = {"graph": "planner-team", "node": "reviewer", "status": "ok"}
        assert value(samples, "plait_step_duration_seconds_count", **step) == 2
        # Queue metrics are the API's to serve: summing processes never counts twice.
        assert not any(name == "plait_runs" for name, _ in samples)
        # The API process ran nothing: its step histogram has no sample.
        api = scrape(http)
        assert value(api, "plait_step_duration_seconds_count", **step) == 0
        assert value(api, "plait_runs", status="success") == 1

        # The run's span ends after its steps and may come in a later export batch.
        spans = receiver.wait_for(
            lambda s: len(by_name(s, "step ")) == 5 and bool(by_name(s, "run ")),
            uuid.UUID(run_id).hex,
        )
        [root] = by_name(spans, "run ")
        assert root.attributes["plait.run_id"] == run_id
        worker_lines = [
            json.loads(line) for line in running.workers[0].log().splitlines() if line[:1] == "{"
        ]
        assert any(line.get("run_id") == run_id for line in worker_lines)
