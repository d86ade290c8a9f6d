"""One ``plait run`` invocation: start or continue a thread, then answer its approvals.

Approvals are answered by ``--decision`` first, then by the example's
``decisions`` in order (only for a run started from that example), then on
the terminal; with none of these the session stops with exit code 4 after
printing the resume command.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.prompt import Prompt

from plait.engine.compiler import CompiledSpec, CompileError, compile_spec
from plait.engine.run import (
    Completed,
    Failed,
    Interrupted,
    RunRejected,
    ThreadMismatch,
    check_input,
    inspect_thread,
    new_thread_id,
    run_graph,
)
from plait.engine.spec import Example, GraphSpec, git_sha
from plait.engine.store import Pool
from plait.server.cli.console import RichView, RunView
from plait.server.cli.database import connected_pool
from plait.server.cli.exits import CliError, ExitCode
from plait.server.cli.inputs import DECISIONS, parse_json_object, pick_example
from plait.server.cli.run_request import RunRequest, resume_command
from plait.server.cli.specs import load_valid_spec, registry_for
from plait.server.queue.direct_runs import DirectRunLog


class Session:
    """One ``plait run`` invocation: a start or continuation, then a resume per approval."""

    def __init__(self, view: RunView) -> None:
        self.view = view
        self.thread_id: str | None = None

    async def execute(self, request: RunRequest) -> ExitCode:
        """Validate, compile, connect, look at the thread, then run until done or parked."""
        loaded = load_valid_spec(request.spec_path)
        explicit = request.input is not None or request.example_name is not None
        example = None if request.input is not None else _example(loaded.spec, request)
        if request.input is not None:
            # Checked before connecting, so a typo costs no database round trip.
            try:
                check_input(loaded.spec, request.input)
            except RunRejected as exc:
                raise CliError(str(exc)) from None
        try:
            compiled = compile_spec(loaded, registry_for(loaded))
        except CompileError as exc:
            raise CliError(
                f"cannot compile {request.spec_path}: {exc}", ExitCode.INVALID_SPEC
            ) from None
        sha = await asyncio.to_thread(git_sha, loaded.path)
        async with connected_pool() as pool:
            self.thread_id = request.thread_id or new_thread_id()
            return await self._drive(
                _Run(request, compiled, pool, self.thread_id, sha, example, explicit)
            )

    async def _drive(self, run: _Run) -> ExitCode:
        """Run, then resume once per approval, until the thread completes, fails or parks."""
        first = await self._first_step(run)
        if isinstance(first, ExitCode):
            return first
        kwargs, pending = first
        while True:
            if pending:
                decisions = await self._decide(run, pending)
                if decisions is None:
                    return ExitCode.WAITING
                kwargs = {"decisions": decisions}
            pending = []
            outcome: ExitCode | None = None
            try:
                async with contextlib.aclosing(
                    run_graph(
                        run.compiled,
                        run.pool,
                        run.thread_id,
                        git_sha=run.sha,
                        log=DirectRunLog(run.pool),
                        **kwargs,
                    )
                ) as events:
                    async for event in events:
                        self.view.show(event)
                        if isinstance(event, Interrupted):
                            pending.append(event)
                        elif isinstance(event, Completed):
                            outcome = ExitCode.OK
                        elif isinstance(event, Failed):
                            outcome = ExitCode.RUN_FAILED
            except RunRejected as exc:
                raise CliError(str(exc)) from None
            if outcome is not None:
                if outcome is ExitCode.OK and run.request.decision is not None and not run.used_cli:
                    self.view.notice("--decision was not used: no approval was pending")
                return outcome
            if not pending:
                message = "the run stopped without finishing, failing or asking for a decision"
                self.view.error(message, ExitCode.RUN_FAILED)
                return ExitCode.RUN_FAILED

    async def _first_step(self, run: _Run) -> tuple[dict[str, Any], list[Interrupted]] | ExitCode:
        """What to do with the thread as it stands: start, continue, or answer approvals.

        Returns the first ``run_graph`` arguments and the approvals to answer
        first, or an exit code when there is nothing to run.
        """
        view = self.view
        try:
            status = await inspect_thread(
                run.compiled, run.pool, run.thread_id, DirectRunLog(run.pool)
            )
        except ThreadMismatch as exc:
            raise CliError(f"{exc} (run without --thread to start a new one)") from None
        if status.state == "finished" and not run.explicit:
            view.notice(
                f"thread {run.thread_id} has already finished; nothing to continue. Its output:"
            )
            view.show(Completed(output=_output(run.compiled, status.values)))
            return ExitCode.OK
        if status.state in ("new", "finished"):
            if status.state == "finished":
                view.notice(f"thread {run.thread_id} had finished; starting a new run on it")
            # The example's decisions answer the approvals of a run started from it.
            run.use_example_decisions = run.request.input is None
            return {"input": run.start_input()}, []
        if run.explicit:
            raise CliError(
                f"thread {run.thread_id} has unfinished work ({status.state}); continue it "
                f"without --input/--example: {resume_command(run.request.spec_path, run.thread_id)}"
            )
        if status.state == "pending":
            stopped = f" (last error: {status.error})" if status.error else ""
            view.notice(
                f"thread {run.thread_id} stopped before {', '.join(status.next)}{stopped}; "
                "continuing from its last checkpoint"
            )
            return {}, []
        view.notice(f"thread {run.thread_id} is waiting for a decision")
        for interrupt in status.interrupts:
            view.show(interrupt)
        return {}, status.interrupts

    async def _decide(self, run: _Run, pending: list[Interrupted]) -> dict[str, Any] | None:
        """A decision per pending approval, or None when one cannot be had (parked)."""
        decisions: dict[str, Any] = {}
        for interrupt in pending:
            decision = run.next_decision()
            if decision is not None:
                source, value = decision
                self.view.notice(f"decision from {source}: {value['decision']}")
            elif run.request.interactive and isinstance(self.view, RichView):
                value = await asyncio.to_thread(ask_decision, self.view.console, interrupt)
            else:
                command = resume_command(run.request.spec_path, run.thread_id, "approve")
                self.view.waiting(interrupt, run.thread_id, command)
                return None
            decisions[interrupt.interrupt_id] = value
        return decisions


@dataclass
class _Run:
    """Everything one invocation works with once the spec is compiled and the pool open."""

    request: RunRequest
    compiled: CompiledSpec
    pool: Pool
    thread_id: str
    sha: str | None
    example: Example | None
    explicit: bool
    used_cli: bool = False
    use_example_decisions: bool = False
    _example_decisions: int = 0

    def start_input(self) -> dict[str, Any]:
        """The input of a fresh run: ``--input``, else the example's."""
        if self.request.input is not None:
            return self.request.input
        if self.example is None:
            name = self.compiled.loaded.name
            raise CliError(f"{name} has no examples; give the input with --input JSON")
        return dict(self.example.input)

    def next_decision(self) -> tuple[str, dict[str, Any]] | None:
        """``--decision`` once, then the example's decisions in order; None when out of them."""
        if self.request.decision is not None and not self.used_cli:
            self.used_cli = True
            return "--decision", self.request.decision
        if (
            self.use_example_decisions
            and self.example is not None
            and self._example_decisions < len(self.example.decisions)
        ):
            decision = self.example.decisions[self._example_decisions]
            self._example_decisions += 1
            return f"example {self.example.name!r}", decision.model_dump()
        return None


def _example(spec: GraphSpec, request: RunRequest) -> Example | None:
    """The example in play: ``--example``, or the first one for a fresh run without --input."""
    if request.example_name is not None:
        return pick_example(spec, request.example_name)
    if request.thread_id is not None:
        # Continuing a thread needs no input: the first example only serves a new thread id.
        return spec.spec.examples[0] if spec.spec.examples else None
    return pick_example(spec, None)


def _output(compiled: CompiledSpec, values: dict[str, Any]) -> dict[str, Any]:
    return {name: values.get(name) for name in compiled.output_fields}


def ask_decision(console: Console, interrupt: Interrupted) -> dict[str, Any]:
    """Ask on the terminal: approve, reject, or edit (new arguments as JSON), plus a comment."""
    choice = Prompt.ask("Decision", choices=list(DECISIONS), default="approve", console=console)
    arguments: dict[str, Any] | None = None
    if choice == "edit":
        payload = interrupt.payload if isinstance(interrupt.payload, dict) else {}
        current = json.dumps(payload.get("arguments") or {}, ensure_ascii=False)
        while arguments is None:
            text = Prompt.ask("New arguments (JSON object)", default=current, console=console)
            try:
                arguments = parse_json_object(text, "the arguments")
            except CliError as exc:
                console.print(f"[red]{exc.message}[/]")
    comment = Prompt.ask("Comment (optional)", default="", console=console) or None
    return {"decision": choice, "arguments": arguments, "comment": comment}
