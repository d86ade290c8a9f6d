"""Run example specs in-process, the way ``plait run`` does, and collect their events."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from plait.engine.compiler import CompiledSpec, compile_spec
from plait.engine.run.events import Completed, Failed, Interrupted, NodeStarted, RunEvent
from plait.engine.run.runner import new_thread_id, run_graph
from plait.engine.spec.loader import load_spec
from plait.engine.spec.validate import load_directory
from plait.engine.store.pool import Pool
from plait.server.queue.direct_runs import DirectRunLog

SPECS = Path(__file__).resolve().parents[3] / "specs"


def compiled(name: str) -> CompiledSpec:
    """The example ``specs/<name>.yaml``, compiled with its folder's specs for refs."""
    return compile_spec(load_spec(SPECS / f"{name}.yaml"), load_directory(SPECS))


@dataclass
class Outcome:
    """Every event of a run and its resumes."""

    thread_id: str
    events: list[RunEvent] = field(default_factory=list)

    @property
    def started(self) -> list[str]:
        """Top-level nodes in the order they started."""
        return [e.node for e in self.events if isinstance(e, NodeStarted) and not e.path]

    @property
    def interrupts(self) -> list[Interrupted]:
        return [e for e in self.events if isinstance(e, Interrupted)]

    @property
    def output(self) -> dict[str, Any]:
        last = self.events[-1]
        assert isinstance(last, Completed), last
        return last.output

    @property
    def failure(self) -> Failed:
        last = self.events[-1]
        assert isinstance(last, Failed), last
        return last


Runner = Callable[..., Awaitable[Outcome]]


@pytest.fixture
def run_example(pool: Pool) -> Runner:
    """``await run_example(name, input=..., decisions=[...])``: run until done or out of decisions.

    Without ``input`` the spec's first example runs with its own decisions; ``spec`` runs
    that compiled spec instead of ``name``'s (an example's own replies, say).
    """

    async def run(
        name: str,
        *,
        input: dict[str, Any] | None = None,
        example: str | None = None,
        decisions: Sequence[dict[str, Any]] | None = None,
        spec: CompiledSpec | None = None,
    ) -> Outcome:
        spec = spec or compiled(name)
        chosen = next((e for e in spec.spec.spec.examples if example in (None, e.name)), None)
        if input is None:
            assert chosen is not None
            input = chosen.input
            if decisions is None:
                decisions = [d.model_dump() for d in chosen.decisions]
        queue = list(decisions or [])
        outcome = Outcome(new_thread_id())
        kwargs: dict[str, Any] = {"input": input}
        while True:
            pending: list[Interrupted] = []
            async with contextlib.aclosing(
                run_graph(spec, pool, outcome.thread_id, log=DirectRunLog(pool), **kwargs)
            ) as events:
                async for event in events:
                    outcome.events.append(event)
                    if isinstance(event, Interrupted):
                        pending.append(event)
            if not pending or not queue:
                return outcome
            kwargs = {"decisions": {pending[0].interrupt_id: queue.pop(0)}}

    return run
