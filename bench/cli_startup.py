"""Start-up of the ``plait`` command (goals: ``--help`` <= 0.3 s, ``validate specs/`` <= 0.5 s).

Each command runs as a fresh process, as a person or a pre-commit hook runs
it; the baseline in the same run is the interpreter starting and exiting
(``python -c pass``), which no command can beat. Wall time is the median of
the repetitions; CPU (user + system of the child) is steadier on a shared
machine, so both are reported.

    .venv/bin/python bench/cli_startup.py [--repeats 11] [--before CHECKOUT]

``--before`` also times the same commands in another checkout (say a
worktree of an older commit) with this interpreter, alternating with this
one, so a change is measured against what it changed in the same run.

Writes its figures into bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from _report import machine, median, write_section

ROOT = Path(__file__).resolve().parents[1]
PLAIT = [sys.executable, "-m", "plait.server.cli.app"]
#: A person's shell: bytecode is cached (this machine's sessions set PYTHONDONTWRITEBYTECODE).
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
#: (label, command, goal in seconds or None for the baseline)
COMMANDS: list[tuple[str, list[str], float | None]] = [
    ("`python -c pass` (baseline)", [sys.executable, "-c", "pass"], None),
    ("`plait --help`", [*PLAIT, "--help"], 0.3),
    ("`plait validate specs/`", [*PLAIT, "validate", "specs"], 0.5),
    ("`plait graph specs/summarize.yaml`", [*PLAIT, "graph", "specs/summarize.yaml"], None),
]


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``command`` in ``cwd`` (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=ENV, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _commit(tree: Path) -> str:
    """The short commit a checkout is at."""
    found = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return found.stdout.strip() or str(tree)


def main() -> None:
    """Run each command ``--repeats`` times (one warm-up first) and report the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--before", type=Path, help="another checkout to time alongside")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    options = parser.parse_args()
    trees = [ROOT, *([options.before.resolve()] if options.before else [])]
    load_before = os.getloadavg()[0]
    results: dict[tuple[str, Path], tuple[float, float]] = {}
    for label, command, _goal in COMMANDS:
        runs: dict[Path, list[tuple[float, float]]] = {tree: [] for tree in trees}
        for tree in trees:
            timed(command, tree)  # warm the file cache and the bytecode
        for _ in range(options.repeats):
            for tree in trees:  # alternated: a burst of load hits both alike
                runs[tree].append(timed(command, tree))
        for tree in trees:
            walls, cpus = zip(*runs[tree], strict=True)
            results[label, tree] = median(list(walls)), median(list(cpus))
    load_after = os.getloadavg()[0]
    baseline = results[COMMANDS[0][0], ROOT][0]
    before_note = (
        f" and in a checkout of {_commit(options.before)} (before)" if options.before else ""
    )
    lines = [
        f"Measured {machine()}; load average {load_before:.1f} before, {load_after:.1f} after.",
        "",
        f"Method: `bench/cli_startup.py --repeats {options.repeats}`: each command as a fresh",
        f"process, in this checkout{before_note}, alternating, after one warm-up (which",
        "also caches bytecode, as a person's shell would); the median wall time and the",
        "median CPU (user + system) of the child.",
        "",
    ]
    if options.before:
        lines += [
            "| command | wall p50 (ms) | CPU p50 (ms) | before: wall / CPU (ms) | goal |",
            "|---|---:|---:|---:|---|",
        ]
    else:
        lines += ["| command | wall p50 (ms) | CPU p50 (ms) | goal |", "|---|---:|---:|---|"]
    for label, _command, goal in COMMANDS:
        wall, cpu = results[label, ROOT]
        if goal is None:
            target = "baseline" if wall == baseline else ""
        else:
            target = f"<= {goal * 1000:.0f} ms: {'meets' if wall <= goal else 'misses'}"
        cells = [label, f"{wall * 1000:.0f}", f"{cpu * 1000:.0f}"]
        if options.before:
            old_wall, old_cpu = results[label, options.before.resolve()]
            cells.append(f"{old_wall * 1000:.0f} / {old_cpu * 1000:.0f}")
        lines.append("| " + " | ".join([*cells, target]) + " |")
    body = "\n".join(lines)
    print(body)
    if not options.no_readme:
        write_section("cli", body)


if __name__ == "__main__":
    main()
