"""``plait run SPEC``: run a spec on a thread, stop on approvals, resume, continue.

What happens, in order: validate the spec (same errors as ``plait validate``),
compile it, connect to Postgres and migrate, look at the thread (``--thread``),
then run. Approvals are answered by ``--decision`` first, then by the
example's ``decisions`` in order, then by asking on the terminal; with none of
these the command stops with exit code 4 and prints the resume command.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.server.cli.exits import CliError, ExitCode
from plait.server.cli.run_request import DecisionChoice, parse_request, resume_command
from plait.server.cli.specs import InvalidSpec

if TYPE_CHECKING:
    from plait.server.cli.console import RunView


def run_command(
    spec: Annotated[
        Path, typer.Argument(help="The spec file to run.", show_default=False, metavar="SPEC")
    ],
    input: Annotated[
        str | None,
        typer.Option(
            "--input", "-i", help="Input as a JSON object, or @file.json.", metavar="JSON"
        ),
    ] = None,
    example: Annotated[
        str | None,
        typer.Option(
            "--example", "-e", help="Run this named example (default: the first).", metavar="NAME"
        ),
    ] = None,
    thread: Annotated[
        str | None,
        typer.Option(
            "--thread",
            "-t",
            help="Continue this thread (after an approval stop or a crash).",
            metavar="ID",
        ),
    ] = None,
    decision: Annotated[
        DecisionChoice | None,
        typer.Option("--decision", "-d", help="Answer the pending approval."),
    ] = None,
    arguments: Annotated[
        str | None,
        typer.Option(
            "--arguments", help="New arguments (JSON object) for --decision edit.", metavar="JSON"
        ),
    ] = None,
    comment: Annotated[
        str | None,
        typer.Option("--comment", help="A comment stored with the decision.", metavar="TEXT"),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print one JSON event per line instead of the view.")
    ] = False,
) -> None:
    """Run a spec, showing each node as it starts and finishes.

    With no --input the spec's first example runs (--example NAME picks one).
    An approval stops the run: it is answered by --decision, else by the
    example's decisions in order, else on the terminal; with none of these,
    plait exits with code 4 and prints the command that resumes the thread.
    --thread continues a thread: one waiting for a decision, or one whose run
    was killed (it resumes from its last checkpoint; finished nodes do not run
    again).
    """
    # Imported here: the views need the run events, which `plait --help` must not load.
    from plait.server.cli.console import JsonView, RichView
    from plait.server.cli.output import make_console

    console = make_console()
    view: RunView = (
        JsonView() if json_output else RichView(console, stream_tokens=console.is_terminal)
    )
    # Imported here: LangGraph and the compiler take a second to import, and
    # `plait validate` / `plait --help` should not pay for them (nor for asyncio).
    import asyncio

    from plait.server.cli.session import Session

    session = Session(view)
    try:
        request = parse_request(spec, input, example, thread, decision, arguments, comment)
        code = asyncio.run(session.execute(request))
    except InvalidSpec as exc:
        report_invalid(view, exc)
        code = exc.code
    except CliError as exc:
        view.error(exc.message, exc.code)
        code = exc.code
    except EOFError:
        # The terminal closed while asking for a decision: the run stays parked.
        resume = resume_command(spec, session.thread_id or "<thread>", "approve")
        view.error(
            f"no decision was given (end of input); the run waits. Decide with: {resume}",
            ExitCode.WAITING,
        )
        code = ExitCode.WAITING
    except KeyboardInterrupt:
        hint = (
            f"; continue with: {resume_command(spec, session.thread_id)}"
            if session.thread_id
            else ""
        )
        view.error(f"interrupted{hint}", ExitCode.INTERRUPTED)
        code = ExitCode.INTERRUPTED
    raise typer.Exit(code)


def report_invalid(view: RunView, exc: InvalidSpec) -> None:
    """The spec's issues, as ``plait validate`` prints them (or as JSON)."""
    from plait.server.cli.console import JsonView
    from plait.server.cli.output import print_issues, styled_output

    if isinstance(view, JsonView):
        view.error(exc.message, exc.code, issues=[issue.to_dict() for issue in exc.issues])
        return
    print_issues(styled_output(stderr=True), exc.issues)
    view.error(exc.message, exc.code)
