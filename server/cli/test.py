"""``plait test PATH...``: run the examples that carry ``expect`` as tests, offline.

Every spec is validated first (the same errors as ``plait validate``); then
each example with ``expect`` runs on a thread of its own, several at once,
and each result is printed as it ends. ``--junit FILE`` writes a JUnit XML
report for CI. Exits 0 when every test passed, 6 when one failed, 1 when a
spec has errors.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plait.server.cli.exits import CliError, ExitCode
from plait.server.cli.specs import SpecPaths, registry_for

if TYPE_CHECKING:
    from rich.console import Console

    from plait.engine.run import CaseResult
    from plait.engine.spec import Example, LoadedSpec, SpecRegistry

#: Tests run at once by default (each holds a database connection while it runs).
DEFAULT_JOBS = 4


def test_command(
    paths: SpecPaths,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, max=16, help="Tests run at once.")
    ] = DEFAULT_JOBS,
    example: Annotated[
        str | None,
        typer.Option("--example", "-e", help="Run only the examples of this name."),
    ] = None,
    junit: Annotated[
        Path | None,
        typer.Option("--junit", help="Also write a JUnit XML report here.", metavar="FILE"),
    ] = None,
) -> None:
    """Run each example that has `expect` assertions as a test, offline.

    An example gives the input, the approval decisions in order and, if it
    likes, its own scripted model replies (`models`); `expect` lists CEL
    assertions over outcome, state, output, steps, usage and error. Examples
    without `expect` are not tests and are only counted.
    """
    # Imported here (as the rest below): `plait --help` imports this module.
    import asyncio

    from plait.engine.spec import check_paths, has_errors
    from plait.server.cli.output import make_console, print_issues, styled_output

    console = make_console()
    files, issues = check_paths(paths)
    if has_errors(issues):
        print_issues(styled_output(), issues)
        errors = sum(issue.severity == "error" for issue in issues)
        raise CliError(f"{errors} error(s) in the specs: nothing was run", ExitCode.INVALID_SPEC)
    started = time.monotonic()
    results, skipped = asyncio.run(_run_all(files, example, jobs, console))
    seconds = time.monotonic() - started
    failed = [result for result in results if not result.passed]
    if junit is not None:
        _write_junit(junit, results, seconds)
    if not results:
        where = f" named {example!r}" if example else " with `expect`"
        raise CliError(
            f"no example{where} in {len(files)} spec file(s): add `expect:` assertions to an "
            "example to make it a test (docs/testing.md)",
            ExitCode.USAGE,
        )
    for result in failed:
        _print_failure(console, result)
    passed = len(results) - len(failed)
    note = f", {skipped} example(s) without expect" if skipped else ""
    console.print(f"{passed} passed, {len(failed)} failed in {seconds:.1f}s{note}")
    raise typer.Exit(ExitCode.TESTS_FAILED if failed else ExitCode.OK)


async def _run_all(
    files: list[Path], only: str | None, jobs: int, console: Console
) -> tuple[list[CaseResult], int]:
    # Imported here: LangGraph and the compiler take a second to import.
    import asyncio

    from plait.engine.compiler import compile_spec
    from plait.engine.run import counting_usage, run_case, tests_of
    from plait.engine.spec import load_spec
    from plait.server.cli.database import connected_pool
    from plait.server.queue.direct_runs import DirectRunLog

    cases: list[tuple[LoadedSpec, SpecRegistry, Example]] = []
    skipped = 0
    for file in files:
        loaded = load_spec(file)
        registry = registry_for(loaded)
        tests = [t for t in tests_of(loaded.spec) if only in (None, t.name)]
        skipped += len(loaded.spec.spec.examples) - len(tests_of(loaded.spec))
        cases.extend((loaded, registry, test) for test in tests)
    slots = asyncio.Semaphore(jobs)
    results: list[CaseResult] = []
    async with connected_pool() as pool:

        async def one(loaded: LoadedSpec, registry: SpecRegistry, test: Example) -> None:
            async with slots:
                result = await run_case(
                    loaded, lambda s: compile_spec(s, registry), pool, test, DirectRunLog(pool)
                )
            results.append(result)
            _print_result(console, result)

        with counting_usage():
            await asyncio.gather(*(one(*case) for case in cases))
    order = {(loaded.name, test.name): i for i, (loaded, _, test) in enumerate(cases)}
    results.sort(key=lambda r: order[(r.spec, r.example)])
    return results, skipped


def _print_result(console: Console, result: CaseResult) -> None:
    from rich.text import Text

    mark, style = ("✓", "green") if result.passed else ("✗", "red")
    line = Text(f"{mark} ", style=style)
    line.append(f"{result.spec} > {result.example}")
    line.append(f"  {result.outcome}, {result.seconds:.2f}s", style="dim")
    console.print(line)


def _print_failure(console: Console, result: CaseResult) -> None:
    from rich.text import Text

    console.print(Text(f"\n{result.spec} > {result.example} failed", style="bold red"))
    console.print(f"  outcome: {result.outcome}; steps: {', '.join(result.steps) or 'none'}")
    if result.error:
        console.print(f"  error: {result.error}")
    for check in result.checks:
        if not check.passed:
            console.print(Text(f"  expected: {check.source}", style="red"))
            console.print(f"       got: {check.detail}")
    console.print("")


def _write_junit(path: Path, results: list[CaseResult], seconds: float) -> None:
    """A JUnit XML report: one testsuite per spec, one testcase per example."""
    from xml.etree import ElementTree

    root = ElementTree.Element(
        "testsuites",
        tests=str(len(results)),
        failures=str(sum(not r.passed for r in results)),
        time=f"{seconds:.3f}",
    )
    suites: dict[str, ElementTree.Element] = {}
    for result in results:
        suite = suites.get(result.spec)
        if suite is None:
            suite = suites[result.spec] = ElementTree.SubElement(
                root, "testsuite", name=result.spec
            )
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=result.spec,
            name=result.example,
            time=f"{result.seconds:.3f}",
        )
        failing = [check for check in result.checks if not check.passed]
        if failing:
            failure = ElementTree.SubElement(
                case, "failure", message=f"{len(failing)} assertion(s) failed"
            )
            failure.text = "\n".join(f"expected: {c.source}\n     got: {c.detail}" for c in failing)
    for suite in suites.values():
        cases = suite.findall("testcase")
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(case.find("failure") is not None for case in cases)))
    path.parent.mkdir(parents=True, exist_ok=True)
    ElementTree.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
