"""Node and grader functions of the evaluation tests' specs.

Every call of a grader appends the run id to the file ``EVAL_CALLS_FILE`` names,
so a test counts how often each run was graded, whichever worker graded it.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

CALLS_FILE_ENV = "EVAL_CALLS_FILE"


def answer(text: str) -> str:
    """The node: an answer to ``text``."""
    return f"answer: {text.upper()}"


def _called(trajectory: dict[str, Any], grader: str) -> None:
    with open(os.environ[CALLS_FILE_ENV], "a", encoding="utf-8") as calls:
        calls.write(f"{trajectory['run_id']} {grader}\n")


def _seen(run_id: str) -> bool:
    """Whether a grader was called on ``run_id`` before."""
    with open(os.environ[CALLS_FILE_ENV], "a+", encoding="utf-8") as calls:
        calls.seek(0)
        return run_id in calls.read().split()


def length_score(trajectory: dict[str, Any]) -> dict[str, Any]:
    """1.0 for an answer of 20 characters or more, else its share of 20."""
    _called(trajectory, "length")
    text = trajectory["output"]["answer"]
    return {"score": min(len(text), 20) / 20, "reason": f"{len(text)} characters"}


def broken(trajectory: dict[str, Any]) -> float:
    """A grader with a bug."""
    _called(trajectory, "broken")
    raise KeyError("no field 'verdict' in this trajectory")


async def slow(trajectory: dict[str, Any]) -> float:
    """A grader that takes far longer than its spec's timeout."""
    _called(trajectory, "slow")
    await asyncio.sleep(30)
    return 1.0


def steady(trajectory: dict[str, Any]) -> tuple[float, str]:
    """A grader that works: one score for every run."""
    _called(trajectory, "steady")
    return 0.5, "half marks"


def lookup_order(order_id: str, secrets: dict[str, str]) -> dict[str, Any]:
    """The tool: an order, fetched with the shop's token (which it echoes, carelessly)."""
    return {"order_id": order_id, "items": 2, "fetched_with": secrets["SHOP_TOKEN"]}


def finish(order: dict[str, Any], decision: dict[str, Any]) -> str:
    """The last node: what was done with the order."""
    return f"order {order['order_id']} shipped ({decision['decision']})"


async def hang_once(trajectory: dict[str, Any]) -> tuple[float, str]:
    """Hangs on a run's first call (its worker stops meanwhile); answers on the next."""
    first = not await asyncio.to_thread(_seen, trajectory["run_id"])
    _called(trajectory, "patient")
    if first:
        await asyncio.sleep(120)
    return 0.7, "graded on the second try"
