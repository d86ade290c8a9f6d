"""Shared by the benchmarks: machine description and README section updates."""

from __future__ import annotations

import datetime
import os
import platform
import re
import statistics
from pathlib import Path

README = Path(__file__).with_name("README.md")


def machine() -> str:
    """One line naming the date, CPU count, CPU model and Python version."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{today}; nproc {os.cpu_count()} ({cpu}); "
        f"Python {platform.python_version()} on {platform.system()}"
    )


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` quantile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def median(values: list[float]) -> float:
    """The median."""
    return statistics.median(values)


def write_section(name: str, body: str) -> None:
    """Replace the text between ``<!-- name:start -->`` and ``<!-- name:end -->``."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = README.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(text):
        raise SystemExit(f"{README} has no {start} ... {end} section")
    README.write_text(pattern.sub(lambda _: f"{start}\n{body.strip()}\n{end}", text), "utf-8")
