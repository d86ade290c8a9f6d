"""``plait record THREAD`` and ``plait replay RECORDING...``: real runs as regression tests.

``record`` writes a thread's runs (input, decisions, model replies, tool results,
remote agents' answers, path and ending) to a recording file
(``engine/run/replay.py``). ``replay`` runs each recording again on the spec it
was recorded on (or ``--against`` another version of it) with nothing called,
prints per recording what changed, and exits 6 when an outcome or a path changed.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.server.cli.exits import CliError, ExitCode

if TYPE_CHECKING:
    from rich.console import Console

    from plait.engine.run import Recording, ReplayResult
    from plait.engine.spec import LoadedSpec

SpecOption = Annotated[
    Path,
    typer.Option(
        "--spec",
        "-s",
        help="The spec file the thread ran (the same digest).",
        exists=True,
        dir_okay=False,
    ),
]


def record_command(
    thread_id: Annotated[str, typer.Argument(help="The thread to record.")],
    spec: SpecOption,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write here (default: <thread>.recording.json)."),
    ] = None,
    tenant: Annotated[
        str, typer.Option("--tenant", help="The tenant whose thread it is.")
    ] = "default",
) -> None:
    """Record a thread's runs as a file that `plait replay` runs again offline.

    The file holds the thread's input, the decisions its approvals got, every
    model reply (kept when the spec sets `audit: {model_calls: true}`), tool
    result and remote agent's answer (`a2a` nodes) its runs got, the path it
    took and how it ended.
    """
    import asyncio

    from plait.server.cli.output import make_console
    from plait.server.cli.specs import load_valid_spec

    loaded = load_valid_spec(spec)
    recording = asyncio.run(_record(loaded, thread_id, tenant))
    target = output or Path(f"{thread_id}.recording.json")
    target.write_text(json.dumps(recording.to_json(), indent=2) + "\n", encoding="utf-8")
    ending = recording.expected
    answers = sum(len(call.turns) for call in recording.a2a_calls)
    remote = f"{answers} remote agent replies, " if recording.a2a_calls else ""
    make_console().print(
        f"Recorded {recording.graph}@{recording.version} thread {thread_id}: "
        f"{ending.outcome}, {len(ending.steps)} steps, {len(recording.model_calls)} model "
        f"replies, {len(recording.tool_calls)} tool results, {remote}"
        f"{len(recording.decisions)} decisions -> {target}"
    )


async def _record(loaded: LoadedSpec, thread_id: str, tenant: str) -> Recording:
    from plait.engine.compiler import compile_spec
    from plait.engine.run import RecordingError, record_thread
    from plait.server.cli.database import connected_pool
    from plait.server.cli.specs import registry_for
    from plait.server.queue.direct_runs import get_thread
    from plait.server.queue.threads import stored_thread_id

    stored = stored_thread_id(tenant, thread_id)
    async with connected_pool() as pool:
        thread = await get_thread(pool, stored)
        if thread is None:
            raise CliError(f"no run was ever started on thread {thread_id!r} (tenant {tenant!r})")
        if thread.digest != loaded.digest:
            where = f" (git {thread.git_sha[:12]})" if thread.git_sha else ""
            raise CliError(
                f"thread {thread_id!r} ran {thread.graph}@{thread.version}, digest "
                f"{thread.digest[:12]}{where}; {loaded.path} is {loaded.name}@{loaded.version}, "
                f"digest {loaded.digest[:12]}: give the file as it was when the thread ran "
                "(e.g. `git show <sha>:<path> > old.yaml`)"
            )
        compiled = compile_spec(loaded, registry_for(loaded))
        try:
            return await record_thread(compiled, pool, thread_id, stored)
        except RecordingError as exc:
            raise CliError(str(exc)) from None


def replay_command(
    recordings: Annotated[
        list[Path],
        typer.Argument(help="Recording files (from `plait record`).", exists=True, dir_okay=False),
    ],
    spec: SpecOption,
    against: Annotated[
        Path | None,
        typer.Option(
            "--against",
            help="Replay on this version of the spec instead (another file of the same graph).",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Run recorded threads again with no model, tool or remote agent called; show what changed.

    Each recording runs on a new thread of the spec it was recorded on (`--spec`,
    the same digest) or, with `--against`, of another version: its input and
    decisions again, every model reply, tool result and remote agent's answer from
    the recording. Prints per recording where outcome, path, cost or state
    changed; exits 6 when an outcome or a path did (a run that asks for a reply,
    tool result or answer the recording lacks has left the recorded path).
    """
    import asyncio

    from plait.server.cli.output import make_console
    from plait.server.cli.specs import load_valid_spec

    console = make_console()
    recorded = load_valid_spec(spec)
    target = load_valid_spec(against) if against is not None else recorded
    loaded_recordings = [_read(path) for path in recordings]
    for path, recording in zip(recordings, loaded_recordings, strict=True):
        if recording.digest != recorded.digest:
            raise CliError(
                f"{path} was recorded on {recording.graph}@{recording.version} (digest "
                f"{recording.digest[:12]}); {spec} is digest {recorded.digest[:12]}: give the "
                "spec it was recorded on as --spec, and the new version as --against"
            )
    if target.name != recorded.name:
        raise CliError(
            f"--against {against} is graph {target.name!r}, not {recorded.name!r}: "
            "replay against a version of the same graph"
        )
    loaded_recordings = _with_paths(recorded, recordings, loaded_recordings)
    results = asyncio.run(_replay_all(target, loaded_recordings))
    failed = 0
    for path, result in zip(recordings, results, strict=True):
        failed += result.failed
        _print(console, path, result)
    where = f"{target.name}@{target.version}"
    console.print(
        f"{len(results) - failed} unchanged path(s), {failed} changed, replayed on {where}"
    )
    raise typer.Exit(ExitCode.TESTS_FAILED if failed else ExitCode.OK)


def _read(path: Path) -> Recording:
    from plait.engine.run import Recording, RecordingError

    try:
        return Recording.from_json(json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as exc:
        raise CliError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecordingError as exc:
        raise CliError(f"{path}: {exc}") from None


def _with_paths(
    recorded: LoadedSpec, paths: list[Path], recordings: list[Recording]
) -> list[Recording]:
    """Each recording keyed by node paths: files recorded before hold node ids, which are
    placed in the spec they were recorded on (or refused, naming the nodes)."""
    from plait.engine.compiler import compile_spec
    from plait.engine.run import RecordingError, with_paths
    from plait.server.cli.specs import registry_for

    compiled = compile_spec(recorded, registry_for(recorded))
    placed = []
    for path, recording in zip(paths, recordings, strict=True):
        try:
            placed.append(with_paths(recording, compiled))
        except RecordingError as exc:
            raise CliError(f"{path}: {exc}") from None
    return placed


async def _replay_all(target: LoadedSpec, recordings: list[Recording]) -> list[ReplayResult]:
    from plait.engine.compiler import compile_spec
    from plait.engine.run import counting_usage, replay_recording
    from plait.server.cli.database import connected_pool
    from plait.server.cli.specs import registry_for

    compile_with = functools.partial(compile_spec, registry=registry_for(target))
    async with connected_pool() as pool:
        results = []
        with counting_usage():
            for recording in recordings:
                results.append(await replay_recording(target, compile_with, pool, recording))
        return results


def _print(console: Console, path: Path, result: ReplayResult) -> None:
    from rich.text import Text

    if result.failed:
        mark, style = "✗", "red"
    elif result.changes:
        mark, style = "~", "yellow"
    else:
        mark, style = "✓", "green"
    line = Text(f"{mark} ", style=style)
    line.append(str(path))
    ending = result.ending
    line.append(f"  {ending.outcome}, {len(ending.steps)} steps", style="dim")
    console.print(line)
    for change in result.changes:
        console.print(f"    {change}")
    replies, tools, answers = result.unused
    if replies or tools or answers:
        remote = f", {answers} remote agent reply(ies)" if answers else ""
        console.print(
            f"    not asked for: {replies} recorded model reply(ies), {tools} tool result(s)"
            + remote
        )
