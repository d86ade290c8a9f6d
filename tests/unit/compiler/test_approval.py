"""approval: interrupt payload, resume with approve / reject / edit, invalid and expired."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from plait.engine.compiler.nodes import approval
from plait.engine.errors import NodeError
from tests.unit.compiler.helpers import Runner, chain, make_spec


def _approval(**options: Any) -> Any:
    node = {
        "kind": "approval",
        "action": "issue_refund",
        "arguments": "{'amount': state.amount}",
        "reason": "Refund of {{ state.amount }} requested",
        "output": "decision",
        **options,
    }
    return make_spec({"ask": node}, chain("ask"), {"amount": {}, "decision": {}})


async def test_approval_interrupts_with_the_payload_then_resumes() -> None:
    runner = Runner(_approval(expires_in="1h"))
    before = datetime.now(UTC)
    parked = await runner.start({"amount": 30})
    (pending,) = parked["__interrupt__"]
    payload = pending.value
    expires_at = datetime.fromisoformat(payload.pop("expires_at"))
    assert payload == {
        "kind": "approval",
        "node": "ask",
        "action": "issue_refund",
        "arguments": {"amount": 30},
        "reason": "Refund of 30 requested",
        "on_expire": "reject",
    }
    assert 3590 < (expires_at - before).total_seconds() < 3610
    out = await runner.resume({"decision": "approve", "comment": "fine"})
    assert out["decision"] == {
        "decision": "approve",
        "arguments": {"amount": 30},
        "comment": "fine",
    }


async def test_reject_and_edit_decisions() -> None:
    runner = Runner(_approval())
    await runner.start({"amount": 30})
    out = await runner.resume({"decision": "reject"})
    assert out["decision"] == {"decision": "reject", "arguments": {"amount": 30}, "comment": None}
    runner = Runner(_approval())
    await runner.start({"amount": 30})
    out = await runner.resume({"decision": "edit", "arguments": {"amount": 10}})
    assert out["decision"]["arguments"] == {"amount": 10}


async def test_invalid_resume_value_is_a_clear_error() -> None:
    runner = Runner(_approval())
    await runner.start({"amount": 30})
    with pytest.raises(NodeError, match=r"node 'ask': invalid approval decision: .*decision"):
        await runner.resume({"decision": "maybe"})


def _an_hour_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Move the approval node's clock past a one-hour expiry.

    A real short expiry (``1ms``) raced the machine: a fast resume could
    arrive before it had passed.
    """
    later = datetime.now(UTC) + timedelta(hours=1, minutes=1)

    class Later(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Later:
            return cls.fromtimestamp(later.timestamp(), tz)

    monkeypatch.setattr(approval, "datetime", Later)


async def test_expired_approval_applies_on_expire(monkeypatch: pytest.MonkeyPatch) -> None:
    approve = Runner(_approval(expires_in="1h", on_expire="approve"))
    await approve.start({"amount": 5})
    fail = Runner(_approval(expires_in="1h", on_expire="fail"))
    await fail.start({"amount": 5})
    # The node runs again on resume an hour later: were the expiry counted
    # from that run rather than from when it was first asked, it would not
    # have expired.
    _an_hour_later(monkeypatch)
    out = await approve.resume({"decision": "reject"})
    assert out["decision"] == {
        "decision": "approve",
        "arguments": {"amount": 5},
        "comment": "expired",
    }
    with pytest.raises(NodeError, match=r"node 'ask': the approval expired at"):
        await fail.resume({"decision": "approve"})
