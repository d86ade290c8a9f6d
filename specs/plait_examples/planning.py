"""Estimating and scheduling work: the executor's tools in ``planner-team.yaml``."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

#: Extra effort (multiplier) for kinds of work that tend to take longer than they sound.
_EFFORT = {
    "migrate": 2.0,
    "migration": 2.0,
    "integrate": 1.5,
    "test": 1.25,
    "tests": 1.25,
    "design": 1.25,
    "review": 0.75,
    "document": 0.75,
    "docs": 0.75,
}
_BASE_HOURS = 2.0
_HOURS_PER_WORD = 0.5


def estimate_tasks(tasks: list[str]) -> dict[str, Any]:
    """Estimate hours for each task from its wording; returns per-task hours and the total."""
    estimates: list[dict[str, Any]] = []
    for task in tasks:
        words = [word.strip(".,;:").lower() for word in task.split()]
        hours = _BASE_HOURS + _HOURS_PER_WORD * max(0, len(words) - 3)
        for word in words:
            hours *= _EFFORT.get(word, 1.0)
        estimates.append({"task": task, "hours": round(hours, 1)})
    total = round(sum(item["hours"] for item in estimates), 1)
    return {"estimates": estimates, "total_hours": total}


def schedule(
    hours: list[float], start: str, hours_per_day: float = 6.0, buffer_days: int = 0
) -> dict[str, Any]:
    """Lay work of ``hours`` out on working days from ``start`` (ISO date), weekends skipped.

    ``buffer_days`` working days are added at the end for review and slack.
    """
    if hours_per_day <= 0:
        raise ValueError("hours_per_day must be positive")
    day = dt.date.fromisoformat(start)
    working_days = math.ceil(sum(hours) / hours_per_day) + max(0, buffer_days)
    counted = 0
    end = day
    while counted < working_days:
        if end.weekday() < 5:
            counted += 1
            if counted == working_days:
                break
        end += dt.timedelta(days=1)
    return {
        "start": day.isoformat(),
        "end": end.isoformat(),
        "working_days": working_days,
        "buffer_days": buffer_days,
    }
