"""What ``plait run`` was asked: its options checked and parsed, and how to continue a thread.

Apart from the command (``plait.server.cli.run``) so the session that executes a
request (``plait.server.cli.session``) can use it without importing the command.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from plait.server.cli.exits import CliError
from plait.server.cli.inputs import make_decision, parse_json_object


class DecisionChoice(StrEnum):
    """The answers to an approval."""

    approve = "approve"
    reject = "reject"
    edit = "edit"


@dataclass
class RunRequest:
    """What the command line asked for, parsed (the spec itself is read later)."""

    spec_path: Path
    input: dict[str, Any] | None
    example_name: str | None
    thread_id: str | None
    decision: dict[str, Any] | None
    interactive: bool


def parse_request(
    spec: Path,
    input: str | None,
    example: str | None,
    thread: str | None,
    decision: DecisionChoice | None,
    arguments: str | None,
    comment: str | None,
) -> RunRequest:
    """Check the options against each other and parse the JSON ones."""
    if input is not None and example is not None:
        raise CliError("give --input or --example, not both")
    if decision is None and (arguments is not None or comment is not None):
        raise CliError("--arguments and --comment go with --decision")
    if thread is not None and not thread.strip():
        raise CliError("--thread needs a thread id")
    return RunRequest(
        spec_path=spec,
        input=parse_json_object(input, "--input") if input is not None else None,
        example_name=example,
        thread_id=thread,
        decision=make_decision(decision.value, arguments, comment) if decision else None,
        interactive=sys.stdin.isatty() and sys.stdout.isatty(),
    )


def resume_command(spec: Path, thread_id: str, decision: str | None = None) -> str:
    """The shell command that continues ``thread_id`` (with ``decision`` when one is needed)."""
    parts = ["plait", "run", str(spec), "--thread", thread_id]
    if decision is not None:
        parts += ["--decision", decision]
    return shlex.join(parts)
