"""Graders on real Postgres with two workers: each sampled run is graded exactly once,
failures are recorded beside an untouched run, and a model can be the grader."""

from __future__ import annotations

import asyncio
from collections import Counter
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from prometheus_client import REGISTRY

from plait.engine.run import sampled
from plait.engine.store.pool import Pool
from plait.server.graphs import versions
from plait.server.queue import runs, scores, threads
from plait.server.queue.runs import Run
from plait.server.workers.worker import Worker
from tests.integration.server.evaluation.conftest import SPECS_DIR, calls_in
from tests.polling import until

#: Runs of the sampling test: enough that a share of 0.5 lands within TOLERANCE.
RUNS = 200
#: The sampled share may differ from the spec's 0.5 by this much: 4.2 standard deviations
#: of a binomial share over 200 runs (a false failure about once in 40,000 sessions).
TOLERANCE = 0.15


def _failures(grader: str) -> float:
    labels = {"graph": "eval-failing", "version": "1.0.0", "grader": grader}
    return REGISTRY.get_sample_value("plait_grader_failures_total", labels) or 0.0


async def _start(pool: Pool, graph: str, text: str) -> Run:
    version = await versions.get_version(pool, graph, "1.0.0", specs_dir=SPECS_DIR)
    assert version is not None
    thread_id = (await threads.create_thread(pool))["thread_id"]
    run, created = await runs.create_run(
        pool, thread_id=thread_id, graph=version, kwargs={"input": {"text": text}}, metadata={}
    )
    assert created
    return run


async def _workers(stack: AsyncExitStack, pool: Pool, count: int) -> list[Worker]:
    started = []
    for _ in range(count):
        worker = Worker(pool, specs_dir=SPECS_DIR, lease_seconds=5.0, concurrency=8)
        task = asyncio.create_task(worker.run())

        async def stop(worker: Worker = worker, task: asyncio.Task[None] = task) -> None:
            worker.stop()
            await task

        stack.push_async_callback(stop)
        await worker.started.wait()
        started.append(worker)
    return started


async def _settled(pool: Pool, run_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Wait until every run ended and no score of theirs is pending; their scores."""

    async def check() -> dict[str, list[dict[str, Any]]] | None:
        for run_id in run_ids:
            run = await runs.get_run(pool, run_id)
            if run is None or run.status not in runs.TERMINAL:
                return None
        found = await scores.scores_of_runs(pool, run_ids, "default")
        pending = [s for listed in found.values() for s in listed if s["status"] == "pending"]
        return None if pending else {**found, "": []}

    done: dict[str, list[dict[str, Any]]] = await until(check, "runs to end and be graded", 120)
    done.pop("")
    return done


async def test_two_workers_grade_each_sampled_run_exactly_once(
    epool: Pool, grader_calls: Path
) -> None:
    async with AsyncExitStack() as stack:
        await _workers(stack, epool, 2)
        started = [await _start(epool, "eval-graded", f"question {n}") for n in range(RUNS)]
        ids = [run.run_id for run in started]
        found = await _settled(epool, ids)

    ended = [await runs.get_run(epool, run_id) for run_id in ids]
    assert all(run is not None and run.state == "succeeded" for run in ended)
    expected = {run_id for run_id in ids if sampled(run_id, 0.5)}
    # Exactly the runs the hash picks, on whichever worker ended them.
    assert set(found) == expected
    share = len(expected) / RUNS
    assert abs(share - 0.5) <= TOLERANCE, share
    # One score per sampled run, from one call of the grader.
    assert Counter(calls_in(grader_calls)) == {(run_id, "length"): 1 for run_id in expected}
    for n, run_id in enumerate(ids):
        if run_id not in expected:
            continue
        [score] = found[run_id]
        assert score["grader"] == "length" and score["status"] == "scored"
        assert (score["graph"], score["version"]) == ("eval-graded", "1.0.0")
        assert score["digest"] and score["attempts"] == 1
        # The grader saw the run's output: "answer: QUESTION <n>".
        length = len(f"answer: QUESTION {n}")
        assert (score["score"], score["reason"]) == (min(length, 20) / 20, f"{length} characters")
    summary = await scores.summary(epool, "default", "eval-graded")
    [line] = [entry for entry in summary if entry.grader == "length"]
    assert (line.version, line.scored, line.failed, line.pending) == ("1.0.0", len(expected), 0, 0)
    assert line.mean is not None and 0.9 <= line.mean <= 1.0


async def test_failing_graders_are_recorded_and_the_run_is_untouched(
    epool: Pool, grader_calls: Path
) -> None:
    failures = {name: _failures(name) for name in ("broken", "slow", "steady")}
    async with AsyncExitStack() as stack:
        await _workers(stack, epool, 2)
        run = await _start(epool, "eval-failing", "will the graders fail?")
        found = await _settled(epool, [run.run_id])

    ended = await runs.get_run(epool, run.run_id)
    assert ended is not None
    assert (ended.status, ended.state, ended.error) == ("success", "succeeded", None)
    by_grader = {score["grader"]: score for score in found[run.run_id]}
    assert by_grader["broken"]["status"] == "failed"
    assert by_grader["broken"]["score"] is None
    assert "KeyError" in by_grader["broken"]["error"]
    assert "no field 'verdict'" in by_grader["broken"]["error"]
    assert by_grader["slow"]["status"] == "failed"
    assert "longer than its timeout (0.5s)" in by_grader["slow"]["error"]
    # One grader's failure does not stop the others.
    assert (by_grader["steady"]["status"], by_grader["steady"]["score"]) == ("scored", 0.5)
    assert by_grader["steady"]["reason"] == "half marks"
    assert sorted(calls_in(grader_calls)) == sorted(
        (run.run_id, name) for name in ("broken", "slow", "steady")
    )
    # /metrics counts the failures per graph, version and grader.
    assert {name: _failures(name) - before for name, before in failures.items()} == {
        "broken": 1,
        "slow": 1,
        "steady": 0,
    }


async def test_a_model_grades_with_the_prompt_rendered_from_the_run(epool: Pool) -> None:
    async with AsyncExitStack() as stack:
        await _workers(stack, epool, 2)
        run = await _start(epool, "eval-judged", "what is plait?")
        found = await _settled(epool, [run.run_id])

    [score] = found[run.run_id]
    assert (score["grader"], score["status"]) == ("judge", "scored")
    assert (score["score"], score["reason"]) == (0.75, "answers the question, briefly")


async def test_a_stopping_worker_hands_its_grading_to_another(
    epool: Pool, grader_calls: Path
) -> None:
    async with AsyncExitStack() as stack:
        await _workers(stack, epool, 1)
        run = await _start(epool, "eval-handback", "stop me while I grade")

        async def grading() -> bool:
            return (run.run_id, "patient") in calls_in(grader_calls)

        await until(grading, "the first worker to start grading")
    # Stopped mid-grade: the claim is back, not counted as an attempt.
    [owed] = (await scores.scores_of_runs(epool, [run.run_id], "default"))[run.run_id]
    assert (owed["status"], owed["attempts"]) == ("pending", 0)

    async with AsyncExitStack() as stack:
        await _workers(stack, epool, 1)
        found = await _settled(epool, [run.run_id])
    [score] = found[run.run_id]
    assert (score["status"], score["score"], score["attempts"]) == ("scored", 0.7, 1)
    assert score["reason"] == "graded on the second try"
    assert calls_in(grader_calls) == [(run.run_id, "patient")] * 2
