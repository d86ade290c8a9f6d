"""Tests of a spec, written in the spec: examples with ``expect`` assertions.

An example (``spec.examples``) gives an input, the approval decisions to give
in order and, for this example only, replies of its models (``models``). With
``expect`` it is a test: :func:`run_case` runs it like ``plait run`` does
(on a thread of its own, resuming with each decision), then evaluates each
assertion, a CEL expression that must be ``true``, over what a person checks
after a run:

- ``outcome``: ``success``, ``failed`` or ``interrupted`` (waiting on a
  decision the example does not give);
- ``state``: the thread's final state; ``output``: the spec's output fields;
- ``steps``: the top-level nodes in the order they ran;
- ``usage``: ``{input_tokens, output_tokens, total_tokens, cost, model_calls,
  tool_calls}`` of this run's model and tool calls;
- ``error``: the failure's message (empty unless ``failed``).
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

from plait.engine.observability import observe
from plait.engine.observability.observe import ToolOutcome
from plait.engine.run.events import Completed, Failed, Interrupted, NodeStarted, RunEvent
from plait.engine.run.records import RunLog
from plait.engine.run.runner import CompiledGraph, inspect_thread, new_thread_id, run_graph
from plait.engine.spec.document import LoadedSpec
from plait.engine.spec.expressions import ExpressionError, evaluate, to_plain
from plait.engine.spec.models import Example, GraphSpec
from plait.engine.store.pool import Pool

Outcome = Literal["success", "failed", "interrupted"]


@dataclass
class Usage:
    """What one test's run spent (counted by :class:`_UsageObserver`)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    model_calls: int = 0
    tool_calls: int = 0

    def as_root(self) -> dict[str, Any]:
        """The ``usage`` root of the assertions."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens,
            "cost": self.cost,
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
        }


@dataclass(frozen=True)
class Check:
    """One assertion and how it went."""

    source: str
    passed: bool
    #: Why it failed, in words: the values it read, or its evaluation error.
    detail: str = ""


@dataclass
class CaseResult:
    """One example run as a test."""

    spec: str
    example: str
    outcome: Outcome
    seconds: float
    steps: list[str] = field(default_factory=list)
    error: str = ""
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Every assertion held."""
        return all(check.passed for check in self.checks)


#: The usage of the test whose run is in this context (nodes inherit it).
_CURRENT: ContextVar[Usage | None] = ContextVar("plait_test_usage", default=None)


class _UsageObserver(observe.Observer):
    """Adds each model and tool call to the usage of the test it belongs to."""

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
        usage = _CURRENT.get()
        if usage is not None:
            usage.model_calls += 1
            usage.input_tokens += input_tokens
            usage.output_tokens += output_tokens
            usage.cost += cost or 0.0

    def tool_called(self, tool: str, outcome: ToolOutcome, seconds: float, reused: bool) -> None:
        usage = _CURRENT.get()
        if usage is not None and not reused:
            usage.tool_calls += 1


_OBSERVER = _UsageObserver()


@contextlib.contextmanager
def counting_usage() -> Iterator[None]:
    """Count model and tool calls per test while inside (a process-wide observer)."""
    observe.add_observer(_OBSERVER)
    try:
        yield
    finally:
        observe.remove_observer(_OBSERVER)


def tests_of(spec: GraphSpec) -> list[Example]:
    """The examples that are tests (they have ``expect``)."""
    return [example for example in spec.spec.examples if example.expect]


def with_replies(loaded: LoadedSpec, example: Example) -> LoadedSpec:
    """``loaded`` with the example's model replies in place of the spec's (a new digest)."""
    if not example.models:
        return loaded
    data = copy.deepcopy(loaded.data)
    index = loaded.spec.spec.examples.index(example)
    given = data["spec"]["examples"][index]["models"]
    for name, replies in given.items():
        defined = data["spec"]["models"][name]
        data["spec"]["models"][name] = {
            "provider": "scripted",
            **{key: replies[key] for key in ("script", "fixture") if key in replies},
            **({"price": defined["price"]} if "price" in defined else {}),
        }
    spec = GraphSpec.model_validate(data)
    return LoadedSpec(
        file=loaded.file,
        text=loaded.text,
        data=data,
        spec=spec,
        source_map=loaded.source_map,
        path=loaded.path,
    )


@contextlib.contextmanager
def measuring_usage() -> Iterator[Usage]:
    """A new :class:`Usage` that counts the model and tool calls made in this context.

    Counted only inside :func:`counting_usage` (which installs the observer, once per
    process for all the runs measured at once).
    """
    usage = Usage()
    token = _CURRENT.set(usage)
    try:
        yield usage
    finally:
        _CURRENT.reset(token)


@dataclass
class Driven:
    """What :func:`drive_case` saw: every event, the final state, the outcome and its error."""

    events: list[RunEvent]
    values: dict[str, Any]
    outcome: Outcome
    error: str


async def drive_case(
    compiled: CompiledGraph,
    pool: Pool,
    thread_id: str,
    input: dict[str, Any],
    decisions: list[Any],
    log: RunLog | None = None,
) -> Driven:
    """Run ``compiled`` on ``thread_id`` from ``input``, answering each approval it waits
    on with the next of ``decisions``, until it ends or waits with none left."""
    events: list[RunEvent] = []
    remaining = list(decisions)
    kwargs: dict[str, Any] = {"input": input}
    while True:
        pending: list[Interrupted] = []
        runs = run_graph(compiled, pool, thread_id, log=log, **kwargs)
        async with contextlib.aclosing(runs) as run:
            async for event in run:
                events.append(event)
                if isinstance(event, Interrupted):
                    pending.append(event)
        if not pending or not remaining:
            break
        kwargs = {"decisions": {pending[0].interrupt_id: remaining.pop(0)}}
    values = (await inspect_thread(compiled, pool, thread_id, log)).values
    last = events[-1] if events else None
    outcome: Outcome = (
        "success"
        if isinstance(last, Completed)
        else "failed"
        if isinstance(last, Failed)
        else "interrupted"
    )
    return Driven(events, values, outcome, last.error if isinstance(last, Failed) else "")


async def run_case(
    loaded: LoadedSpec,
    compile_spec: Callable[[LoadedSpec], CompiledGraph],
    pool: Pool,
    example: Example,
    log: RunLog | None = None,
) -> CaseResult:
    """Run ``example`` on a new thread, giving its decisions, and check its ``expect``.

    ``compile_spec`` compiles the spec with the example's replies in place
    (the caller's compiler and registry: this layer does not compile); ``log``
    records the case's runs (see :func:`plait.engine.run.runner.run_graph`).
    """
    compiled = compile_spec(with_replies(loaded, example))
    started = time.monotonic()
    decisions = [decision.model_dump(exclude_none=True) for decision in example.decisions]
    with measuring_usage() as usage:
        driven = await drive_case(compiled, pool, new_thread_id(), example.input, decisions, log)
    events, values, outcome = driven.events, driven.values, driven.outcome
    last = events[-1] if events else None
    result = CaseResult(
        spec=loaded.name,
        example=example.name,
        outcome=outcome,
        seconds=time.monotonic() - started,
        steps=[e.node for e in events if isinstance(e, NodeStarted) and not e.path],
        error=driven.error,
    )
    roots = {
        "outcome": outcome,
        "state": to_plain(values),
        "output": to_plain(last.output) if isinstance(last, Completed) else {},
        "steps": result.steps,
        "usage": usage.as_root(),
        "error": result.error,
    }
    result.checks = [_check(source, roots) for source in example.expect]
    return result


def _check(source: str, roots: dict[str, Any]) -> Check:
    """Evaluate one assertion; a failure says what it read."""
    try:
        value = evaluate(source, roots)
    except ExpressionError as exc:
        return Check(source, False, f"could not be evaluated: {exc.message}")
    if value is True:
        return Check(source, True)
    if value is not False:
        return Check(source, False, f"gave {_short(value)}, not true or false")
    return Check(source, False, _what_it_read(source, roots))


def _what_it_read(source: str, roots: dict[str, Any]) -> str:
    """``root.field = value`` for what a failed assertion reads, so the report explains it."""
    shown: list[str] = []
    for root in ("outcome", "error", "steps"):
        if root in source:
            shown.append(f"{root} = {_short(roots[root])}")
    for root in ("state", "output", "usage"):
        for name, value in roots[root].items():
            if f"{root}.{name}" in source:
                shown.append(f"{root}.{name} = {_short(value)}")
    return "; ".join(shown) or "it was false"


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
