"""Asking a person for an approval decision on the terminal."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from plait.engine.run.events import Interrupted
from plait.server.cli.output import make_console
from plait.server.cli.session import ask_decision

APPROVAL = Interrupted(
    node="approve",
    interrupt_id="i-1",
    payload={"action": "issue_refund", "arguments": {"order_id": "A-1", "amount": 150}},
)


def answer(monkeypatch: pytest.MonkeyPatch, *replies: str) -> Iterator[str]:
    """Feed ``replies`` to the prompts (rich reads them with ``input()``)."""
    pending = iter(replies)
    monkeypatch.setattr("builtins.input", lambda *_: next(pending))
    return pending


def test_approve_with_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    answer(monkeypatch, "", "")
    decision = ask_decision(make_console(io.StringIO()), APPROVAL)
    assert decision == {"decision": "approve", "arguments": None, "comment": None}


def test_reject_with_a_comment(monkeypatch: pytest.MonkeyPatch) -> None:
    answer(monkeypatch, "reject", "not covered by policy")
    decision = ask_decision(make_console(io.StringIO()), APPROVAL)
    assert decision == {
        "decision": "reject",
        "arguments": None,
        "comment": "not covered by policy",
    }


def test_edit_asks_again_until_the_arguments_are_a_json_object(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    left = answer(monkeypatch, "maybe", "edit", "{broken", '{"order_id": "A-1", "amount": 75}', "")
    decision = ask_decision(make_console(out), APPROVAL)
    assert decision == {
        "decision": "edit",
        "arguments": {"order_id": "A-1", "amount": 75},
        "comment": None,
    }
    assert list(left) == []
    text = out.getvalue()
    assert "Please select one of the available options" in text  # "maybe" was refused
    assert "is not valid JSON" in text
    assert '{"order_id": "A-1", "amount": 150}' in text  # current arguments offered as default
