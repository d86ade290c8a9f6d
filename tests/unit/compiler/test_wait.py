"""wait: the interrupt says until when; a timer's value or a person's resumes it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from plait.engine.compiler import TIMER_FIRED
from plait.engine.errors import NodeError
from tests.unit.compiler.helpers import Runner, chain, make_spec


def _wait(**options: Any) -> Any:
    node = {"kind": "wait", "output": "waited", **options}
    return make_spec({"pause": node}, chain("pause"), {"wake_at": {}, "waited": {}})


async def test_a_wait_for_a_duration_interrupts_until_then_and_a_timer_resumes_it() -> None:
    runner = Runner(_wait(**{"for": "10m"}))
    before = datetime.now(UTC)
    parked = await runner.start({})
    (pending,) = parked["__interrupt__"]
    until = datetime.fromisoformat(pending.value["until"])
    assert pending.value == {"kind": "wait", "node": "pause", "until": until.isoformat()}
    assert before + timedelta(minutes=10) <= until
    out = await runner.resume({"plait": TIMER_FIRED, "due_at": until.isoformat()})
    # The node ran again on resume: its time is still the first one.
    assert out["waited"] == {"until": until.isoformat(), "by": "timer"}


async def test_a_person_may_resume_a_wait_early_with_a_value() -> None:
    wake_at = (datetime.now(UTC) + timedelta(hours=1)).replace(microsecond=0)
    runner = Runner(_wait(until="state.wake_at"))
    parked = await runner.start({"wake_at": wake_at.isoformat().replace("+00:00", "Z")})
    (pending,) = parked["__interrupt__"]
    assert pending.value["until"] == wake_at.isoformat()
    out = await runner.resume({"note": "go now"})
    assert out["waited"] == {
        "until": wake_at.isoformat(),
        "by": "person",
        "value": {"note": "go now"},
    }


async def test_a_time_already_past_does_not_park() -> None:
    past = datetime.now(UTC) - timedelta(minutes=1)
    out = await Runner(_wait(until="state.wake_at")).start({"wake_at": past.isoformat()})
    assert "__interrupt__" not in out
    assert out["waited"] == {"until": past.isoformat(), "by": "timer"}


@pytest.mark.parametrize(
    ("wake_at", "problem"),
    [
        ("tomorrow", r"'tomorrow', which is not an ISO 8601 time; give e\.g\."),
        ("2030-01-01T09:00:00", r"without a timezone; add one \(e\.g\. 'Z' or '\+01:00'\)"),
        (42, r"`until` gave a int; give an ISO 8601 time string"),
    ],
)
async def test_an_until_that_is_not_a_time_says_what_to_give(wake_at: Any, problem: str) -> None:
    with pytest.raises(NodeError, match=rf"node 'pause': .*{problem}"):
        await Runner(_wait(until="state.wake_at")).start({"wake_at": wake_at})
