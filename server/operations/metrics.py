"""Prometheus metrics: what this process measures, and what Postgres knows at scrape time.

Process metrics live in prometheus-client's default registry: step latency,
model calls, tokens and cost, tool outcomes, policy refusals, waits under
tools' limits (fed by the engine through :class:`MetricsObserver`), open SSE
streams, finished runs (by outcome of the attempt, and by Plait's state of the
run), graders' scores and failures, and the state of this process's circuit
breakers (read at scrape time from ``plait.engine.governance.breaker_snapshot()``).

Queue metrics come from Postgres at scrape time (:func:`database_metrics`), so
they are the same whichever process is scraped and need no bookkeeping: runs
by status and by Plait's state (``engine/run/states.py``), dead-lettered runs
waiting for a requeue, queue depth and the age of the oldest pending run,
approvals by status, a histogram of how long decided approvals waited, durable
timers pending by kind (fired timers and their lateness are process metrics), each
limited tool's calls in flight, waiting and whether it is paused, and each
rollout's canary share. Only the API
serves them (``GET /metrics``); a ``plait worker --metrics-port`` serves the
process metrics only, so summing over processes never counts a run twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, cast, get_args

import psycopg
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import (
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

from plait.engine.governance import breaker_snapshot
from plait.engine.observability import Observer, add_observer
from plait.engine.run import STATES, RunStatus
from plait.engine.store import LimitState, Pool, limit_states
from plait.server.approvals import records
from plait.server.approvals.records import APPROVAL_STATUSES
from plait.server.graphs.rollouts import Rollout, list_rollouts
from plait.server.queue import timers
from plait.server.queue.queueing import HIGHEST_PRIORITY, LOWEST_PRIORITY
from plait.server.queue.runs import queue_counts

log = logging.getLogger(__name__)
#: How long a scrape waits for Postgres before it reports ``plait_database_up 0``.
SCRAPE_TIMEOUT_SECONDS = 5.0

STEP_SECONDS = Histogram(
    "plait_step_duration_seconds",
    "Duration of one node step, by graph, node and status (ok, error, interrupted, cancelled).",
    ["graph", "node", "status"],
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)
MODEL_CALLS = Counter(
    "plait_model_calls_total",
    "Chat model calls, by model, provider and outcome.",
    ["model", "provider", "outcome"],
)
MODEL_SECONDS = Histogram(
    "plait_model_call_duration_seconds", "Duration of chat model calls.", ["model", "provider"]
)
TOKENS = Counter(
    "plait_model_tokens_total",
    "Tokens used by chat model calls, by direction (input, output).",
    ["model", "provider", "direction"],
)
COST = Counter(
    "plait_model_cost_total",
    "Cost of chat model calls from the models' `price` (currency units of the spec).",
    ["model", "provider"],
)
TOOL_CALLS = Counter(
    "plait_tool_calls_total",
    "Tool calls by tool and outcome (success, timeout, error, cancelled, reused).",
    ["tool", "outcome"],
)
TOOL_SECONDS = Histogram(
    "plait_tool_call_duration_seconds", "Duration of tool calls that ran.", ["tool"]
)
TOOL_WAIT_SECONDS = Histogram(
    "plait_tool_limit_wait_seconds",
    "How long tool calls waited for their turn under `limits` (reason: concurrency, rate, "
    "paused), by whether they got it (granted) or gave up (timed_out).",
    ["tool", "reason", "outcome"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)
REFUSALS = Counter(
    "plait_policy_refusals_total", "Tool calls refused by policy (allowlists).", ["tool"]
)
RUNS_FINISHED = Counter(
    "plait_runs_finished_total",
    "Run attempts this process finished, by graph and outcome (success, error, timeout, "
    "interrupted, released, rolled_back, lost, dead_lettered, failed).",
    ["graph", "outcome"],
)
RUNS_ENDED = Counter(
    "plait_runs_ended_total",
    "Runs this process ended, by graph and Plait's state (succeeded, partially_succeeded, "
    "waiting_for_person, waiting_for_tool, waiting_for_timer, failed, timed_out, cancelled, "
    "dead_lettered, expired: ended by this process's expiry sweep).",
    ["graph", "state"],
)
# Summed over live processes when worker processes keep their metrics in files (they
# open none: their zero would otherwise be a series per process).
SSE_STREAMS = Gauge(
    "plait_sse_streams_open", "Server-Sent Events streams open now.", multiprocess_mode="livesum"
)
SCORES = Histogram(
    "plait_run_scores",
    "Scores this process's graders gave finished runs (0..1), by graph, version and grader.",
    ["graph", "version", "grader"],
    buckets=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
)
GRADER_FAILURES = Counter(
    "plait_grader_failures_total",
    "Graders of this process that failed to score a run (raised, timed out, answered "
    "something that is not a score), by graph, version and grader.",
    ["graph", "version", "grader"],
)
#: Whether a rollout chose a run's version: its ``canary`` or ``stable`` version for a
#: new thread, or ``none`` (a thread's own version, a named version, no rollout).
RolloutLabel = Literal["canary", "stable", "none"]
RUNS_STARTED = Counter(
    "plait_runs_started_total",
    "Runs clients created through this API process's run routes, by graph, version and "
    "rollout (canary or stable: chosen by the tenant's rollout for a new thread; none: "
    "otherwise).",
    ["graph", "version", "rollout"],
)

TIMERS_FIRED = Counter(
    "plait_timers_fired_total",
    "Durable timers this process's workers fired, by kind (wait, approval_expiry).",
    ["kind"],
)
TIMER_LATENESS = Histogram(
    "plait_timer_lateness_seconds",
    "How long after its due time a timer fired (the poll interval, or no worker running).",
    ["kind"],
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600),
)

APPROVAL_WAIT_BUCKETS = (1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 86400, 7 * 86400)


class MetricsObserver(Observer):
    """Turns the engine's measurements into the Prometheus metrics above."""

    def __init__(self) -> None:
        # Every step observes: the labelled child is looked up once, not per step.
        self._steps: dict[tuple[str, str, str], Any] = {}

    def step_finished(self, graph: str, node: str, status: str, seconds: float) -> None:
        """Observe a step's duration."""
        key = (graph, node, status)
        child = self._steps.get(key)
        if child is None:
            child = self._steps[key] = STEP_SECONDS.labels(graph, node, status)
        child.observe(seconds)

    def model_called(
        self,
        model: str,
        provider: str,
        *,
        ok: bool,
        seconds: float,
        input_tokens: int,
        output_tokens: int,
        cost: float | None,
    ) -> None:
        """Count a model call, its tokens and cost."""
        MODEL_CALLS.labels(model, provider, "success" if ok else "error").inc()
        MODEL_SECONDS.labels(model, provider).observe(seconds)
        if input_tokens:
            TOKENS.labels(model, provider, "input").inc(input_tokens)
        if output_tokens:
            TOKENS.labels(model, provider, "output").inc(output_tokens)
        if cost:
            COST.labels(model, provider).inc(cost)

    def tool_called(self, tool: str, outcome: str, seconds: float, reused: bool) -> None:
        """Count a tool call by outcome (a reused record counts as ``reused``)."""
        TOOL_CALLS.labels(tool, "reused" if reused else outcome).inc()
        if not reused:
            TOOL_SECONDS.labels(tool).observe(seconds)

    def policy_refused(self, node: str, tool: str, reason: str) -> None:
        """Count a refusal."""
        REFUSALS.labels(tool).inc()

    def tool_waited(self, tool: str, reason: str, seconds: float, granted: bool) -> None:
        """Observe how long a call waited for its turn under a tool's limits."""
        TOOL_WAIT_SECONDS.labels(tool, reason, "granted" if granted else "timed_out").observe(
            seconds
        )


_OBSERVER = MetricsObserver()

_BREAKER_STATES = ("closed", "open", "half_open")


class BreakerCollector(Collector):
    """``plait_breaker_state{key, state}``: 1 for each breaker's current state, 0 for the others."""

    def collect(self) -> Iterable[Metric]:
        """Read this process's breakers now."""
        family = GaugeMetricFamily(
            "plait_breaker_state",
            "Circuit breaker state by endpoint key (1 = the breaker is in this state).",
            labels=["key", "state"],
        )
        failures = GaugeMetricFamily(
            "plait_breaker_failures",
            "Failed calls in each breaker's window.",
            labels=["key"],
        )
        for key, described in breaker_snapshot().items():
            for state in _BREAKER_STATES:
                family.add_metric([key, state], 1.0 if described.get("state") == state else 0.0)
            failures.add_metric([key], float(described.get("failures", 0)))
        yield family
        yield failures


_INSTALLED = False


def install() -> None:
    """Register the engine observer and the breaker collector (once per process)."""
    global _INSTALLED
    if _INSTALLED:
        return
    add_observer(_OBSERVER)
    REGISTRY.register(BreakerCollector())
    _INSTALLED = True


def run_started(graph: str, version: str, rollout: RolloutLabel) -> None:
    """Count a run a client created on ``graph@version`` through the run routes (not the
    resume runs of approval decisions, crons or A2A); see :data:`RolloutLabel`."""
    RUNS_STARTED.labels(graph, version, rollout).inc()


def run_finished(graph: str, outcome: str) -> None:
    """Count a run attempt this process ended (``success``, ``error``, ``released``...)."""
    RUNS_FINISHED.labels(graph, outcome).inc()


def run_ended(graph: str, state: str) -> None:
    """Count a run this process ended in ``state`` (Plait's, :mod:`plait.engine.run.states`)."""
    RUNS_ENDED.labels(graph, state).inc()


def run_scored(graph: str, version: str, grader: str, score: float | None) -> None:
    """Count a grader's verdict on a run of ``graph@version``: its ``score``, or ``None``
    for a failure."""
    if score is None:
        GRADER_FAILURES.labels(graph, version, grader).inc()
    else:
        SCORES.labels(graph, version, grader).observe(score)


def timer_fired(kind: str, late_seconds: float) -> None:
    """Count a timer this process fired ``late_seconds`` after its due time."""
    TIMERS_FIRED.labels(kind).inc()
    TIMER_LATENESS.labels(kind).observe(max(0.0, late_seconds))


# --- from Postgres, at scrape time ------------------------------------------------

# Every status is exposed, 0 when no row has it, so a dashboard's series never vanish.
_RUN_STATUSES: tuple[str, ...] = get_args(RunStatus)


async def database_metrics(pool: Pool) -> list[Metric]:
    """The queue's metrics as of now, read from Postgres (one connection)."""
    async with pool.connection() as conn:
        queue = await queue_counts(conn)
        approval_counts = await records.approval_counts(conn)
        waits = await records.decision_waits(conn, APPROVAL_WAIT_BUCKETS)
        limited = await limit_states(conn, None)
        rollouts = await list_rollouts(conn)
        pending_timers = await timers.pending_counts(conn)
    runs = GaugeMetricFamily("plait_runs", "Runs by status, in Postgres.", labels=["status"])
    for status in sorted({*_RUN_STATUSES, *queue.by_status}):
        runs.add_metric([status], float(queue.by_status.get(status, 0)))
    by_state = GaugeMetricFamily(
        "plait_run_states",
        "Runs by Plait's state, in Postgres (a run whose worker's lease expired counts as "
        "retrying).",
        labels=["state"],
    )
    for state in STATES:
        by_state.add_metric([state], float(queue.by_state.get(state, 0)))
    dead = GaugeMetricFamily(
        "plait_runs_dead_lettered",
        "Runs dead-lettered (their attempts kept losing their worker), not requeued.",
    )
    dead.add_metric([], float(queue.dead_lettered))
    depth = GaugeMetricFamily("plait_queue_depth", "Runs waiting for a worker (pending).")
    depth.add_metric([], float(queue.by_status.get("pending", 0)))
    oldest = GaugeMetricFamily(
        "plait_queue_oldest_pending_age_seconds",
        "Age of the oldest pending run (0 when none waits).",
    )
    oldest.add_metric([], queue.oldest_pending_seconds)
    by_priority = GaugeMetricFamily(
        "plait_queue_depth_by_priority",
        "Runs waiting for a worker (pending), by their priority (0-9, before aging).",
        labels=["priority"],
    )
    for priority in range(LOWEST_PRIORITY, HIGHEST_PRIORITY + 1):
        by_priority.add_metric([str(priority)], float(queue.pending_by_priority.get(priority, 0)))
    approvals = GaugeMetricFamily(
        "plait_approvals", "Approvals by status, in Postgres.", labels=["status"]
    )
    for status in sorted({*APPROVAL_STATUSES, *approval_counts}):
        approvals.add_metric([status], float(approval_counts.get(status, 0)))
    wait = HistogramMetricFamily(
        "plait_approval_wait_seconds",
        "Time from an approval's creation to its decision (or expiry), decided approvals.",
    )
    buckets: list[tuple[str, float]] = [
        (_le(bound), float(count))
        for bound, count in zip(APPROVAL_WAIT_BUCKETS, waits.cumulative, strict=True)
    ]
    buckets.append(("+Inf", float(waits.count)))
    wait.add_metric([], buckets, sum_value=waits.total_seconds)
    timers_pending = GaugeMetricFamily(
        "plait_timers_pending",
        "Durable timers waiting for their time, by kind (wait, approval_expiry), in Postgres.",
        labels=["kind"],
    )
    for kind in sorted({*get_args(timers.TimerKind), *pending_timers}):
        timers_pending.add_metric([kind], float(pending_timers.get(kind, 0)))
    return [
        runs,
        by_state,
        dead,
        depth,
        by_priority,
        oldest,
        approvals,
        wait,
        timers_pending,
        *_tool_limit_metrics(limited),
        _rollout_share(rollouts),
    ]


def _tool_limit_metrics(states: list[LimitState]) -> list[Metric]:
    """Calls in flight and waiting, and pauses, of every limited tool key of every tenant."""
    labels = ["tenant", "key"]
    in_flight = GaugeMetricFamily(
        "plait_tool_calls_in_flight",
        "Calls holding a slot of a tool's `limits` now, across all workers.",
        labels=labels,
    )
    waiting = GaugeMetricFamily(
        "plait_tool_calls_waiting",
        "Calls waiting for their turn under a tool's `limits` now, across all workers.",
        labels=labels,
    )
    paused = GaugeMetricFamily(
        "plait_tool_paused",
        "1 while a tool is paused (a Retry-After, or by hand), else 0.",
        labels=labels,
    )
    for state in states:
        key = [state.tenant, state.key]
        in_flight.add_metric(key, float(state.in_flight))
        waiting.add_metric(key, float(state.waiting))
        paused.add_metric(key, 1.0 if state.paused_until is not None else 0.0)
    return [in_flight, waiting, paused]


def _rollout_share(rollouts: list[Rollout]) -> Metric:
    """Each tenant's rollouts: the canary's share of new threads."""
    share = GaugeMetricFamily(
        "plait_rollout_canary_share",
        "Percent of a tenant's new threads of a graph that start on its canary version "
        "(0 when the rollout has no canary).",
        labels=["tenant", "graph", "stable", "canary"],
    )
    for rollout in rollouts:
        share.add_metric(
            [rollout.tenant, rollout.graph, rollout.stable, rollout.canary or ""],
            float(rollout.share),
        )
    return share


async def scrape_database(pool: Pool, seconds: float = SCRAPE_TIMEOUT_SECONDS) -> list[Metric]:
    """:func:`database_metrics` and ``plait_database_up`` (1); only ``up`` 0 when Postgres
    does not answer within ``seconds``, so the process's own metrics still go out.
    """
    up = GaugeMetricFamily("plait_database_up", "1 when this scrape could read Postgres, else 0.")
    try:
        async with asyncio.timeout(seconds):
            found = await database_metrics(pool)
    except (psycopg.Error, TimeoutError) as exc:
        log.warning("metrics: Postgres did not answer the scrape: %s: %s", type(exc).__name__, exc)
        up.add_metric([], 0.0)
        return [up]
    up.add_metric([], 1.0)
    return [*found, up]


def _le(bound: float) -> str:
    return f"{float(bound)}"


class _Snapshot(Collector):
    def __init__(self, metrics: list[Metric]) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[Metric]:
        return iter(self.metrics)


class _Merged(Collector):
    """The families of several sources, one family per name: a sample that two sources
    both have (the same name and labels) is summed, as counts of several processes are."""

    def __init__(self, *sources: Collector | CollectorRegistry) -> None:
        self.sources = sources

    def collect(self) -> Iterable[Metric]:
        families: dict[str, Metric] = {}
        samples: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], Sample]] = {}
        for source in self.sources:
            for family in source.collect():
                if family.name not in families:
                    families[family.name] = Metric(
                        family.name, family.documentation, family.type, family.unit
                    )
                kept = samples.setdefault(family.name, {})
                for sample in family.samples:
                    key = (sample.name, tuple(sorted(sample.labels.items())))
                    before = kept.get(key)
                    if before is None:
                        kept[key] = sample
                    elif not sample.name.endswith("_created"):  # a time, not a count
                        kept[key] = before._replace(value=before.value + sample.value)
        for name, family in families.items():
            family.samples = list(samples[name].values())
            yield family


def exposition(queue: list[Metric], children: Path | None = None) -> bytes:
    """The text exposition of ``GET /metrics``: this process's metrics, ``queue`` (read
    from Postgres), and, with ``children``, what the worker processes of ``plait serve
    --worker-processes`` counted there (prometheus-client's multiprocess files)."""
    sources: list[Collector | CollectorRegistry] = [REGISTRY, snapshot_registry(queue)]
    if children is not None:
        registry = CollectorRegistry(auto_describe=False)
        MultiProcessCollector(registry, path=str(children))
        sources.append(registry)
    return generate_latest(cast(CollectorRegistry, _Merged(*sources)))


def snapshot_registry(metrics: list[Metric]) -> CollectorRegistry:
    """A registry holding ``metrics`` (read once), for one exposition."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Snapshot(metrics))
    return registry
