"""A process killed between a non-idempotent call's intent and its result: no blind repeat.

A child process runs ``doubtful.yaml`` on Postgres and is SIGKILLed at a known
point of a tool call: after its effect (so before its result is recorded), or
before the effect (the intent is recorded by then). The thread is then
continued in this process, as a worker taking the run over would. ``send``
has no ``reconcile``: the run parks on an in-doubt approval, and the decision
says what happens. ``ship`` is reconciled from the effects log.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from plait.engine.compiler import compile_spec
from plait.engine.run.events import Completed, Custom, Failed, Interrupted, RunEvent
from plait.engine.run.runner import run_graph
from plait.engine.spec.loader import load_spec
from plait.engine.store.pool import Pool
from tests.integration.killed_runs import run_until_killed

SPEC = Path(__file__).resolve().parent / "specs" / "doubtful.yaml"
CHILD = "tests.integration.tools.run_in_child"


@pytest.fixture
def effects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "effects.log"
    monkeypatch.setenv("PLAIT_TEST_EFFECTS", str(log))
    monkeypatch.delenv("PLAIT_TEST_DIE", raising=False)
    return log


def _killed_at(database_url: str, thread: str, die: str) -> None:
    """Run the spec in a child process until the tool named by ``die`` waits to be killed."""
    tool, _, point = die.partition(":")
    env = {
        **os.environ,
        "PLAIT_DATABASE_URL": database_url,
        "PLAIT_TEST_DIE": die,
        "PYTHONUNBUFFERED": "1",
    }
    run_until_killed(
        [sys.executable, "-m", CHILD, str(SPEC), thread, '{"order": "o-1"}'],
        env,
        stop_at=lambda event: (event.get("data") or {}).get("test") == "dying",
        what=f"{tool} dying {point} its effect",
    )


async def _continue(pool: Pool, thread: str, **kwargs: Any) -> list[RunEvent]:
    compiled = compile_spec(load_spec(SPEC))
    return [event async for event in run_graph(compiled, pool, thread, **kwargs)]


def _lines(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _outcomes(events: list[RunEvent]) -> list[tuple[str, str]]:
    return [
        (e.data["tool"], e.data["outcome"])
        for e in events
        if isinstance(e, Custom)
        and isinstance(e.data, dict)
        and e.data.get("plait") == "tool_in_doubt"
    ]


async def _rows(pool: Pool, thread: str) -> dict[str, tuple[int | None, bool]]:
    """tool -> (attempts of its intent, whether a result is recorded)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            """
            SELECT i.tool, i.attempts, r.key IS NOT NULL AS recorded
            FROM plait_tool_intents i LEFT JOIN plait_tool_results r USING (key)
            WHERE i.thread_id = %s
            """,
            (thread,),
        )
        return {row["tool"]: (row["attempts"], row["recorded"]) for row in await cursor.fetchall()}


@pytest.mark.parametrize("decision", ["approve", "edit", "reject"])
async def test_killed_after_the_effect_a_call_without_reconcile_asks_a_person(
    pool: Pool, database_url: str, effects: Path, decision: str
) -> None:
    thread = f"doubt-{uuid.uuid4()}"
    _killed_at(database_url, thread, "send:after")
    assert _lines(effects) == ["send o-1"]
    assert await _rows(pool, thread) == {"send": (1, False)}  # the intent, committed; no result

    parked = await _continue(pool, thread)

    assert _lines(effects) == ["send o-1"], "the call in doubt must not run again by itself"
    waiting = parked[-1]
    assert isinstance(waiting, Interrupted), parked[-1]
    assert waiting.payload["kind"] == "approval" and waiting.payload["action"] == "send"
    assert waiting.payload["arguments"] == {"order": "o-1"}
    assert waiting.payload["in_doubt"]["attempts"] == 1
    assert _outcomes(parked) == [("send", "asked")]

    answer: dict[str, Any] = {"decision": decision}
    if decision == "edit":
        answer["arguments"] = {"sent": "o-1", "n": 1, "checked": "in the mail log"}
    decided = await _continue(pool, thread, decisions={waiting.interrupt_id: answer})

    last = decided[-1]
    if decision == "reject":
        assert isinstance(last, Failed) and "re-run was rejected" in last.error, last
        assert _lines(effects) == ["send o-1"]
        return
    assert isinstance(last, Completed), last
    if decision == "approve":
        assert _lines(effects) == ["send o-1", "send o-1", "ship o-1"]  # the person's re-run
        assert last.output["sent"] == {"sent": "o-1", "n": 2}
    else:
        assert _lines(effects) == ["send o-1", "ship o-1"]
        assert last.output["sent"] == answer["arguments"]
    assert await _rows(pool, thread) == {
        "send": (2 if decision == "approve" else 1, True),
        "ship": (1, True),
    }


async def test_killed_after_the_effect_a_reconciled_call_is_not_repeated(
    pool: Pool, database_url: str, effects: Path
) -> None:
    thread = f"doubt-{uuid.uuid4()}"
    _killed_at(database_url, thread, "ship:after")
    assert _lines(effects) == ["send o-1", "ship o-1"]
    assert await _rows(pool, thread) == {"send": (1, True), "ship": (1, False)}

    events = await _continue(pool, thread)

    assert isinstance(events[-1], Completed), events[-1]
    assert events[-1].output["shipped"] == {"shipped": "o-1", "reconciled": True}
    assert _lines(effects) == ["send o-1", "ship o-1"]
    assert _outcomes(events) == [("ship", "reconciled")]
    assert await _rows(pool, thread) == {"send": (1, True), "ship": (1, True)}


async def test_killed_before_the_effect_a_reconciled_call_runs_once(
    pool: Pool, database_url: str, effects: Path
) -> None:
    thread = f"doubt-{uuid.uuid4()}"
    _killed_at(database_url, thread, "ship:before")
    assert _lines(effects) == ["send o-1"]
    assert await _rows(pool, thread) == {"send": (1, True), "ship": (1, False)}

    events = await _continue(pool, thread)

    assert isinstance(events[-1], Completed), events[-1]
    assert events[-1].output["shipped"] == {"shipped": "o-1", "n": 1}
    assert _lines(effects) == ["send o-1", "ship o-1"]
    assert _outcomes(events) == [("ship", "not_happened")]
    assert await _rows(pool, thread) == {"send": (1, True), "ship": (2, True)}
