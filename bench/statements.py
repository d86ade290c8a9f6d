"""What PostgreSQL executes for one run of ``plait serve``, statement by statement.

Creates a private database whose sessions log every statement with the time
the server spent on it (``log_min_duration_statement = 0``, so it needs a
superuser and the server's log file; parse, bind and execute add up) and the
backend's CPU (``log_statement_stats``: each protocol message's resource usage,
with the backend's running total, so a statement's CPU is the total's growth
over its parse, bind and execute; a statement sent alone commits after its
execute, unreported, so its commit is counted with its connection's next
statement), starts
``plait serve`` on it with the benchmark graphs of ``_runs.py``, sends
``--runs`` runs of the 10-node graph one at a time over HTTP, as many runs of
the one-approval graph parked (``/runs/wait``) and as many resumed (a stream,
as ``resume.py`` times it), and counts what the server's log shows for them,
grouped by statement (literals and names folded). A diagnostic, not a ratio:
the figures say where a run's round trips, transactions and PostgreSQL's time
go.

With ``--levels 50,1000`` it answers another question instead: which statements
cost PostgreSQL more per run as more runs go at once. ``--runs`` runs of the
10-node graph at each level (the same number at every level, so the tables grow
alike), each statement's backend CPU per run at each level, most growth first,
beside all of PostgreSQL's CPU per run (its background processes included).

    .venv/bin/python bench/statements.py [--runs 20] [--levels 50,1000] [--log ...]

Uses ``PLAIT_DATABASE_URL`` for the server to create the database on.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import psycopg
from _report import machine, write_section
from _runs import client, in_batches, over_http, postgres_cpu_seconds, serve_bench, vacuum
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from plait.engine.store import database_url, open_pool

DATABASE = "plait_statements"
LOG = Path("/var/log/postgresql/postgresql-15-main.log")
# One entry per protocol step: a simple query's ``statement``, or an extended
# query's ``parse``, ``bind`` and ``execute`` (counted once, at ``execute``).
_STATEMENT = re.compile(
    rf"@{DATABASE} LOG:  duration: ([0-9.]+) ms  (statement|parse|bind|execute)[^:]*: (.*)",
    re.DOTALL,
)
_ENTRY = re.compile(r"^\d{4}-\d\d-\d\d ")
# ``log_statement_stats``: a report's detail holds the backend's running total of CPU;
# every entry carries the backend's pid (``%p``).
_PID = re.compile(r"^\S+ \S+ \S+ \[(\d+)\]")
_TOTAL = re.compile(r"\[([0-9.]+) s user, ([0-9.]+) s system total\]")


def entries(lines: Iterable[str]) -> Iterator[str]:
    """The log's entries, each with its continuation lines (a statement spans several)."""
    entry: list[str] = []
    for line in lines:
        if _ENTRY.match(line) and entry:
            yield "".join(entry)
            entry = []
        entry.append(line)
    if entry:
        yield "".join(entry)


def fold(statement: str) -> str:
    """A statement with its literals and lists folded, so that runs' statements group."""
    text = " ".join(statement.split())
    text = re.sub(r"'[^']*'", "?", text)
    text = re.sub(r"\$\d+", "?", text)
    text = re.sub(r"\b\d+\b", "N", text)
    text = re.sub(r"(\(\?(, \?)*\)(, )?)+", "(…)", text)
    return text[:160]


@dataclass
class Counted:
    """Statements of one kind of work: how many of each, the server's time on each and its
    backend's CPU on each (ms)."""

    statements: Counter[str] = field(default_factory=Counter)
    ms: Counter[str] = field(default_factory=Counter)
    cpu_ms: Counter[str] = field(default_factory=Counter)


@dataclass
class _Backend:
    """What :func:`count` follows of one backend: its CPU total at its last report and the
    statement its latest log line names."""

    total: float | None = None
    named: str = ""


def count(log: Path, start: int) -> Counted:
    """The statements of the logging database in ``log`` from byte ``start``, folded."""
    counted = Counted()
    backends: dict[str, _Backend] = {}
    with log.open(encoding="utf-8", errors="replace") as lines:
        lines.seek(start)
        for entry in entries(lines):
            if (pid := _PID.match(entry)) is None:
                continue
            backend = backends.setdefault(pid.group(1), _Backend())
            if (match := _STATEMENT.search(entry)) is not None:
                duration, step, text = match.groups()
                backend.named = fold(text)
                counted.ms[backend.named] += float(duration)
                if step in ("statement", "execute"):
                    counted.statements[backend.named] += 1
            elif (total := _TOTAL.search(entry)) is not None:
                # A report (parse, bind with its planning, execute) follows the duration
                # line that names its statement: the growth since the last is that one's.
                now = float(total.group(1)) + float(total.group(2))
                if backend.total is not None and backend.named:
                    counted.cpu_ms[backend.named] += (now - backend.total) * 1000
                backend.total = now
    return counted


def _quotable(statement: str) -> str:
    """The statement's start, fit for a Markdown code span."""
    return statement[:110].replace("`", "'")


async def recreate(url: str) -> str:
    """Create the logging database afresh; the URL to it."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        await conn.execute(f"CREATE DATABASE {DATABASE}")
        await conn.execute(f"ALTER DATABASE {DATABASE} SET log_min_duration_statement = 0")
        await conn.execute(f"ALTER DATABASE {DATABASE} SET log_statement_stats = on")
    return make_conninfo(**{**conninfo_to_dict(url), "dbname": DATABASE})


async def park(http: aiohttp.ClientSession) -> str:
    """A run of the one-approval graph parked on its approval (``/runs/wait``); its thread."""
    async with http.post("/threads", json={}) as response:
        thread: str = (await response.json())["thread_id"]
    body = {"assistant_id": "park", "input": {"n": 1}}
    async with http.post(f"/threads/{thread}/runs/wait", json=body) as response:
        response.raise_for_status()
    return thread


async def resume(http: aiohttp.ClientSession, thread: str) -> None:
    """Resume a parked thread with an approval as ``resume.py`` does: a stream read to ``end``."""
    body = {
        "assistant_id": "park",
        "command": {"resume": {"decision": "approve"}},
        "stream_mode": ["values"],
    }
    async with http.post(f"/threads/{thread}/runs/stream", json=body) as response:
        response.raise_for_status()
        await response.read()


async def measure(url: str, runs: int, log: Path) -> dict[str, Counted]:
    """Statements the log shows per kind of work, ``runs`` times each (after a warm-up)."""
    counted: dict[str, Counted] = {}
    with serve_bench(url, workers=None) as (base, _):
        async with client(base, 1) as http:
            one = over_http(http, [], "sync")
            await one()
            await resume(http, await park(http))
            parked = [await park(http) for _ in range(runs)]

            async def ten_nodes() -> None:
                for _ in range(runs):
                    await one()

            async def parks() -> None:
                for _ in range(runs):
                    parked.append(await park(http))

            async def resumes() -> None:
                for thread in parked[:runs]:
                    await resume(http, thread)

            kinds = (("10-node run", ten_nodes), ("park", parks), ("resume", resumes))
            for kind, action in kinds:
                start = await asyncio.to_thread(os.path.getsize, log)
                await action()
                # The server's statements after the last reply (finish, journal) land soon.
                await asyncio.sleep(1.0)
                counted[kind] = await asyncio.to_thread(count, log, start)
    return counted


async def measure_levels(
    url: str, levels: list[int], runs: int, log: Path
) -> dict[int, tuple[Counted, float | None]]:
    """Per level: the statements of ``runs`` 10-node runs at that many at once, and all of
    PostgreSQL's CPU (s) over them (None: not visible)."""
    measured: dict[int, tuple[Counted, float | None]] = {}
    with serve_bench(url, workers=None) as (base, _):
        for level in levels:
            async with client(base, level) as http:
                one = over_http(http, [], "sync")
                await in_batches(level, level, one)  # warm-up: every connection used
                # As concurrency.py before each batch: this machine's PostgreSQL runs no
                # autovacuum, and an earlier level's dead rows would count as this one's.
                async with await open_pool(url, max_size=1) as pool:
                    await vacuum(pool)
                start = await asyncio.to_thread(os.path.getsize, log)
                before = postgres_cpu_seconds()
                await in_batches(runs, level, one)
                await asyncio.sleep(1.0)  # the last runs' finish and journal land
                after = postgres_cpu_seconds()
                spent = None if before is None or after is None else after - before
                measured[level] = (await asyncio.to_thread(count, log, start), spent)
    return measured


def levels_report(measured: dict[int, tuple[Counted, float | None]], runs: int, top: int) -> str:
    """The table of :func:`measure_levels`: the statements whose backend CPU per run moved
    most between the lowest and the highest level first."""
    levels = sorted(measured)
    low, high = measured[levels[0]][0], measured[levels[-1]][0]
    statements = set(low.cpu_ms) | set(high.cpu_ms)
    growth = sorted(statements, key=lambda s: abs(high.cpu_ms[s] - low.cpu_ms[s]), reverse=True)
    header = " | ".join(f"CPU ms per run at {level}" for level in levels)
    totals = "; ".join(
        f"at {level}: {sum(c.statements.values()) / runs:.1f} statements, "
        f"{sum(c.cpu_ms.values()) / runs:.2f} ms of backend CPU, "
        f"{'-' if pg is None else f'{pg / runs * 1000:.2f}'} ms of all PostgreSQL's"
        for level, (c, pg) in sorted(measured.items())
    )
    lines = [
        f"Per run {totals}.",
        "",
        f"| statements per run at {' / '.join(map(str, levels))} | {header} | CPU ms each "
        f"at {' / '.join(map(str, levels))} | statement |",
        "|---:|" + "---:|" * len(levels) + "---:|---|",
    ]
    for statement in growth[:top]:
        counts = [measured[level][0].statements[statement] for level in levels]
        cpu = [measured[level][0].cpu_ms[statement] for level in levels]
        lines.append(
            f"| {' / '.join(f'{n / runs:.2f}' for n in counts)} | "
            + " | ".join(f"{c / runs:.3f}" for c in cpu)
            + f" | {' / '.join(f'{c / max(n, 1):.3f}' for c, n in zip(cpu, counts, strict=True))}"
            + f" | `{_quotable(statement)}` |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--levels", help="runs at once, comma-separated: which statements grow with them"
    )
    parser.add_argument("--log", type=Path, default=LOG, help="the PostgreSQL server's log")
    parser.add_argument("--top", type=int, default=12, help="statements listed per kind")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    args = parser.parse_args()
    url = asyncio.run(recreate(database_url()))
    if args.levels:
        levels = [int(level) for level in args.levels.split(",")]
        measured = asyncio.run(measure_levels(url, levels, args.runs, args.log))
        body = (
            f"Measured {machine()}. Method: `bench/statements.py --levels {args.levels} "
            f"--runs {args.runs}`: `plait serve` (defaults) on a private database logging every "
            "statement (see the section Statements per run); at each level in that order, a "
            "warm-up of as many runs as the level, `VACUUM ANALYZE`, then "
            f"{args.runs} runs of the 10-node graph at that many at "
            "once; per statement, its backend CPU per run at each level, the statements whose "
            "CPU per run moved most first. All PostgreSQL: every `postgres` process's CPU over "
            f"the batch, per run.\n\n{levels_report(measured, args.runs, args.top)}"
        )
        print(body)
        if not args.no_readme:
            write_section("statements-levels", body)
        return
    parts = [
        f"Measured {machine()}. Method: `bench/statements.py --runs {args.runs}`: "
        f"`plait serve` (defaults) on a private database logging every statement with "
        f"its duration and its backend's CPU; {args.runs} runs of each kind one at a time, "
        "after one; per run, most backend CPU first (literals folded). Server time is what "
        "PostgreSQL logs for a statement's parse, bind and execute, waits included (a "
        "commit's WAL flush, a lock). Backend CPU is the growth of the backend's CPU total "
        "(`log_statement_stats`) over the same messages, planning included; a statement "
        "sent alone commits after its execute, unreported, so its commit is counted with "
        "its connection's next statement. The logging adds its own share to every "
        "statement (a `BEGIN`, which does nothing, shows it)."
    ]
    for kind, counted in asyncio.run(measure(url, args.runs, args.log)).items():
        total = sum(counted.statements.values())
        ms = sum(counted.ms.values())
        cpu = sum(counted.cpu_ms.values())
        parts.append(
            f"\n**{kind}: {total / args.runs:.1f} statements, "
            f"{ms / args.runs:.2f} ms of server time, {cpu / args.runs:.2f} ms of backend CPU "
            "per run**\n"
        )
        parts.append(
            "| per run | server ms per run | backend CPU ms per run | CPU ms each | statement |"
            "\n|---:|---:|---:|---:|---|"
        )
        parts.extend(
            f"| {counted.statements[statement] / args.runs:.2f} "
            f"| {counted.ms[statement] / args.runs:.3f} | {spent / args.runs:.3f} "
            f"| {spent / max(counted.statements[statement], 1):.3f} "
            f"| `{_quotable(statement)}` |"
            for statement, spent in counted.cpu_ms.most_common(args.top)
        )
    body = "\n\n".join(parts[:1]) + "\n\n" + "\n".join(parts[1:])
    print(body)
    if not args.no_readme:
        write_section("statements", body)


if __name__ == "__main__":
    main()
