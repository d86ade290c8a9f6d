"""What PostgreSQL executes for one run of ``plait serve``, statement by statement.

Creates a private database whose sessions log every statement with the time
the server spent on it (``log_min_duration_statement = 0``, so it needs a
superuser and the server's log file; parse, bind and execute add up), starts
``plait serve`` on it with the benchmark graphs of ``_runs.py``, sends
``--runs`` runs of the 10-node graph one at a time over HTTP, as many runs of
the one-approval graph parked (``/runs/wait``) and as many resumed (a stream,
as ``resume.py`` times it), and counts what the server's log shows for them,
grouped by statement (literals and names folded). A diagnostic, not a ratio:
the figures say where a run's round trips, transactions and PostgreSQL's time
go.

    .venv/bin/python bench/statements.py [--runs 20] [--log /var/log/postgresql/...]

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
from _runs import client, over_http, serve_bench
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from plait.engine.store import database_url

DATABASE = "plait_statements"
LOG = Path("/var/log/postgresql/postgresql-15-main.log")
# One entry per protocol step: a simple query's ``statement``, or an extended
# query's ``parse``, ``bind`` and ``execute`` (counted once, at ``execute``).
_STATEMENT = re.compile(
    rf"@{DATABASE} LOG:  duration: ([0-9.]+) ms  (statement|parse|bind|execute)[^:]*: (.*)",
    re.DOTALL,
)
_ENTRY = re.compile(r"^\d{4}-\d\d-\d\d ")


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
    """Statements of one kind of work: how many of each, and the server's time on each (ms)."""

    statements: Counter[str] = field(default_factory=Counter)
    ms: Counter[str] = field(default_factory=Counter)


def count(log: Path, start: int) -> Counted:
    """The statements of the logging database in ``log`` from byte ``start``, folded."""
    counted = Counted()
    with log.open(encoding="utf-8", errors="replace") as lines:
        lines.seek(start)
        for entry in entries(lines):
            if (match := _STATEMENT.search(entry)) is None:
                continue
            duration, step, text = match.groups()
            statement = fold(text)
            counted.ms[statement] += float(duration)
            if step in ("statement", "execute"):
                counted.statements[statement] += 1
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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--log", type=Path, default=LOG, help="the PostgreSQL server's log")
    parser.add_argument("--top", type=int, default=12, help="statements listed per kind")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    args = parser.parse_args()
    url = asyncio.run(recreate(database_url()))
    parts = [
        f"Measured {machine()}. Method: `bench/statements.py --runs {args.runs}`: "
        f"`plait serve` (defaults) on a private database logging every statement with "
        f"its duration; {args.runs} runs of each kind one at a time, after one; per run, "
        "most server time first (literals folded). Server time is what PostgreSQL "
        "logs for a statement's parse, bind and execute, its commit included: where "
        "its CPU goes, roughly, on a quiet machine."
    ]
    for kind, counted in asyncio.run(measure(url, args.runs, args.log)).items():
        total = sum(counted.statements.values())
        ms = sum(counted.ms.values())
        parts.append(
            f"\n**{kind}: {total / args.runs:.1f} statements, "
            f"{ms / args.runs:.2f} ms of server time per run**\n"
        )
        parts.append("| per run | server ms per run | statement |\n|---:|---:|---|")
        parts.extend(
            f"| {counted.statements[statement] / args.runs:.2f} "
            f"| {spent / args.runs:.3f} | `{_quotable(statement)}` |"
            for statement, spent in counted.ms.most_common(args.top)
        )
    body = "\n\n".join(parts[:1]) + "\n\n" + "\n".join(parts[1:])
    print(body)
    if not args.no_readme:
        write_section("statements", body)


if __name__ == "__main__":
    main()
