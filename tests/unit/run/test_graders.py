"""Graders without a database: which runs are sampled, what counts as a score, and a grader
that fails or runs over its time."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from plait.engine.governance.secrets import EnvironmentSecrets
from plait.engine.run.graders import GraderFailed, Score, as_score, grade, graders_owed, sampled
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.loader import load_spec

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {{name: graded, version: "1.0.0"}}
spec:
  state:
    answer: {{type: string}}
  models:
    judge:
      provider: scripted
      script:
        - when: "says hello"
          content: '{reply}'
        - content: "this prompt did not show the output"
  nodes:
    write: {{kind: python, function: "unit_graders:write", writes: {{answer: result}}}}
  edges:
    - {{from: START, to: write}}
    - {{from: write, to: END}}
  evaluation:
    sample: 0.3
    timeout: 2s
    graders:
      judged:
        llm: {{model: judge, prompt: "the run says {{{{ output.answer }}}}"}}
      coded: {{python: "unit_graders:{function}"}}
"""

CODE = """\
import asyncio


def write(**state):
    return "hello"


def fine(trajectory):
    return {"score": 0.25, "reason": trajectory["output"]["answer"]}


def bare(trajectory):
    return 1


async def sleepy(trajectory):
    await asyncio.sleep(60)
    return 1.0


def wrong(trajectory):
    return "great"
"""

POLITE = '{"score": 0.9, "reason": "polite"}'
TRAJECTORY: dict[str, Any] = {"run_id": "r1", "input": {}, "output": {"answer": "hello"}}


def _spec(folder: Path, *, reply: str = POLITE, function: str = "fine") -> LoadedSpec:
    (folder / "unit_graders.py").write_text(CODE)
    path = folder / "graded.yaml"
    path.write_text(SPEC.format(reply=reply, function=function))
    return load_spec(path)


def test_the_sample_is_a_stable_share_of_run_ids() -> None:
    ids = [str(uuid.UUID(int=n, version=4)) for n in range(20_000)]
    picked = [run_id for run_id in ids if sampled(run_id, 0.3)]
    assert 0.28 < len(picked) / len(ids) < 0.32
    # The same answer every time, and a bigger share keeps every run a smaller one had.
    assert picked == [run_id for run_id in ids if sampled(run_id, 0.3)]
    assert set(picked) <= {run_id for run_id in ids if sampled(run_id, 0.6)}
    assert not any(sampled(run_id, 0.0) for run_id in ids[:1000])
    assert all(sampled(run_id, 1.0) for run_id in ids[:1000])


def test_only_runs_that_ended_of_their_own_owe_scores(tmp_path: Path) -> None:
    loaded = _spec(tmp_path)
    candidates = [str(uuid.UUID(int=n, version=4)) for n in range(100)]
    run_id = next(run_id for run_id in candidates if sampled(run_id, 0.3))
    unsampled = next(run_id for run_id in candidates if not sampled(run_id, 0.3))
    assert graders_owed(loaded, unsampled, "succeeded") == []
    for state in ("succeeded", "partially_succeeded", "failed", "timed_out"):
        assert graders_owed(loaded, run_id, state) == ["judged", "coded"]
    for state in ("waiting_for_person", "waiting_for_tool", "cancelled", "dead_lettered"):
        assert graders_owed(loaded, run_id, state) == []


def test_answers_that_are_scores_and_answers_that_are_not() -> None:
    assert as_score(1) == Score(1.0)
    assert as_score((0.5, "half")) == Score(0.5, "half")
    assert as_score({"score": 0, "reason": None}) == Score(0.0)
    for answer, said in [
        ("great", "a number 0..1"),
        (True, "a number 0..1"),
        (1.5, "not 1.5"),
        (float("nan"), "not nan"),
        ({"verdict": 1}, "no `score`"),
    ]:
        with pytest.raises(GraderFailed) as failed:
            as_score(answer)
        assert said in str(failed.value)


async def test_a_python_grader_reads_the_trajectory(tmp_path: Path) -> None:
    loaded = _spec(tmp_path)
    found = await grade(loaded, "coded", TRAJECTORY, secrets=EnvironmentSecrets())
    assert found == Score(0.25, "hello")


async def test_a_model_grades_from_the_rendered_prompt(tmp_path: Path) -> None:
    loaded = _spec(tmp_path, reply='```json {"score": 0.9, "reason": "polite"}```')
    found = await grade(loaded, "judged", TRAJECTORY, secrets=EnvironmentSecrets())
    assert found == Score(0.9, "polite")


async def test_graders_that_fail_say_why(tmp_path: Path) -> None:
    cases = [
        ({"function": "sleepy"}, "coded", "longer than its timeout (2s)"),
        ({"function": "wrong"}, "coded", "a number 0..1, not 'great'"),
        ({"reply": "I would say 0.9"}, "judged", "did not reply with JSON"),
        ({"function": "missing"}, "coded", "has no function 'missing'"),
    ]
    for options, name, said in cases:
        loaded = _spec(tmp_path, **options)
        with pytest.raises(GraderFailed) as failed:
            await grade(loaded, name, TRAJECTORY, secrets=EnvironmentSecrets())
        assert said in str(failed.value)
