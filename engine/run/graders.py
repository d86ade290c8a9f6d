"""Graders: score a finished run from its trajectory, with a python function or a model.

A spec's ``evaluation`` names graders and the share of finished runs they see
(``sample``). Which runs are in the sample is a hash of the run id, so the choice
is the same on every worker and every time (:func:`sampled`). A grader gets the
run's trajectory, the same JSON object ``GET .../trajectory`` returns (``input``,
``output``, ``steps``, ``run``...), and gives back a :class:`Score`: a number
0..1 and, optionally, why. Anything else (an exception, a reply that is not a
score, a grader over its ``timeout``) raises :class:`GraderFailed`; the caller
records it as a failed score. Nothing here touches the run itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import math
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from plait.engine.governance.model_access import model_access
from plait.engine.governance.secrets import SecretSource
from plait.engine.models.factory import make_chat_model
from plait.engine.run.states import RunState
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.expressions import ExpressionError, render
from plait.engine.spec.models import GraderDef, LlmGrader, duration_seconds
from plait.engine.tools.python_tools import import_function

#: The run states a sample is drawn from: runs that ran to an end of their own. A run
#: waiting on a person or a tool is not finished (the run that resumes it is graded);
#: a cancelled or dead-lettered one did not run to an end.
GRADED_STATES: frozenset[RunState] = frozenset(
    {"succeeded", "partially_succeeded", "failed", "timed_out"}
)
#: Characters of a model's reply quoted in a failure.
_QUOTED = 200
#: Threads for sync python graders (a process grades at most a few runs at once).
GRADER_THREADS = 4
_THREADS = ThreadPoolExecutor(GRADER_THREADS, thread_name_prefix="plait-grader")


@dataclass(frozen=True)
class Score:
    """A grader's verdict on one run: ``score`` in 0..1 and, optionally, why."""

    score: float
    reason: str | None = None


class GraderFailed(Exception):
    """A grader raised, ran over its time, or returned something that is not a score."""


def sampled(run_id: str, share: float) -> bool:
    """Whether run ``run_id`` is in a sample of ``share`` (0..1) of runs.

    The first 8 bytes of SHA-256 of the id, as a fraction of 2**64: uniform over
    random ids, and the same answer on every worker, every time.
    """
    if share <= 0:
        return False
    fraction = int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:8], "big") / 2**64
    return fraction < share


def graders_owed(loaded: LoadedSpec, run_id: str, state: str) -> list[str]:
    """The graders of ``loaded`` a run that ended in ``state`` owes a score (none if unsampled)."""
    evaluation = loaded.spec.spec.evaluation
    if evaluation is None or state not in GRADED_STATES:
        return []
    if not sampled(run_id, evaluation.sample):
        return []
    return list(evaluation.graders)


async def grade(
    loaded: LoadedSpec,
    name: str,
    trajectory: Mapping[str, Any],
    *,
    secrets: SecretSource,
) -> Score:
    """Score ``trajectory`` with grader ``name`` of ``loaded``, within the spec's ``timeout``.

    ``secrets`` gives an ``llm`` grader's model its API key (the run's tenant's on a server).
    """
    evaluation = loaded.spec.spec.evaluation
    if evaluation is None or name not in evaluation.graders:
        raise GraderFailed(f"the spec has no grader {name!r}")
    definition = evaluation.graders[name]
    limit = duration_seconds(evaluation.timeout)
    try:
        async with asyncio.timeout(limit):
            return await _grade(loaded, definition, trajectory, secrets)
    except TimeoutError:
        raise GraderFailed(f"the grader took longer than its timeout ({limit:g}s)") from None
    except GraderFailed:
        raise
    except Exception as exc:
        raise GraderFailed(f"{type(exc).__name__}: {exc}") from exc


async def _grade(
    loaded: LoadedSpec,
    definition: GraderDef,
    trajectory: Mapping[str, Any],
    secrets: SecretSource,
) -> Score:
    if definition.python is not None:
        function = import_function(definition.python, loaded.base_dir)
        if inspect.iscoroutinefunction(function):
            returned = await function(dict(trajectory))
        else:
            # In a thread: a worker's loop must keep heartbeating its runs. A thread past
            # the timeout is left to finish (its answer dropped), in a pool of its own so
            # hung graders never take the threads runs' sync nodes use.
            loop = asyncio.get_running_loop()
            returned = await loop.run_in_executor(_THREADS, function, dict(trajectory))
        return as_score(returned)
    assert definition.llm is not None  # the model's validator: one of the two
    return await _llm_grade(loaded, definition.llm, trajectory, secrets)


async def _llm_grade(
    loaded: LoadedSpec, grader: LlmGrader, trajectory: Mapping[str, Any], secrets: SecretSource
) -> Score:
    model_def = loaded.spec.spec.models.get(grader.model)
    if model_def is None:
        raise GraderFailed(f"model {grader.model!r} is not defined in spec.models")
    access = await model_access(model_def, secrets)
    model = make_chat_model(model_def, base_dir=loaded.base_dir, access=access)
    context = {key: trajectory.get(key) for key in ("input", "output", "steps", "run")}
    try:
        messages: list[BaseMessage] = []
        if grader.system is not None:
            messages.append(SystemMessage(render(grader.system, context)))
        messages.append(HumanMessage(render(grader.prompt, context)))
    except ExpressionError as exc:
        raise GraderFailed(f"the grader's prompt failed to render: {exc.message}") from None
    reply = await model.ainvoke(messages)
    return _parse_reply(reply.text)


def _parse_reply(text: str) -> Score:
    body = text.strip()
    if body.startswith("```"):
        # Models often fence JSON in markdown; the fence is not part of the data.
        body = body.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        raise GraderFailed(
            f'the model did not reply with JSON {{"score", "reason"}}: {text[:_QUOTED]!r}'
        ) from None
    return as_score(data)


def as_score(value: Any) -> Score:
    """A grader's answer as a :class:`Score`: a number, ``{score, reason}``, ``(score, reason)``."""
    reason: Any = None
    if isinstance(value, Mapping):
        if "score" not in value:
            raise GraderFailed(f"the grader's answer has no `score`: {str(value)[:_QUOTED]}")
        number, reason = value["score"], value.get("reason")
    elif isinstance(value, tuple) and len(value) == 2:
        number, reason = value
    else:
        number = value
    if isinstance(number, bool) or not isinstance(number, int | float):
        raise GraderFailed(f"a score is a number 0..1, not {str(number)[:_QUOTED]!r}")
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise GraderFailed(f"a score is a number 0..1, not {number}")
    return Score(float(number), None if reason is None else str(reason))
