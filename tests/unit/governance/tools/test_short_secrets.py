"""Secret values too short to be secret are not masked (masking a one-character secret
garbled every text holding that character), and the operator is told once which secret it
is, never its value. Longer values are masked first, so one holding another is masked whole."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from plait.engine.governance import secrets as secrets_module
from plait.engine.governance.secrets import (
    MIN_MASKED_LENGTH,
    mask_spec_secrets,
    redact,
    short_secret_warning,
)
from tests.unit.governance.tools.helpers import FNS, Run, make_spec


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new process would: no short secret said yet."""
    monkeypatch.setattr(secrets_module, "_SAID_TOO_SHORT", set())


def test_a_one_character_secret_leaves_the_text_as_it_is(
    caplog: pytest.LogCaptureFixture,
) -> None:
    task = {"context_id": "ctx-1", "status": {"text": "exit 0"}}

    with caplog.at_level(logging.WARNING, logger="plait.secrets"):
        assert redact(task, {"PIN": "x"}) == task
        assert redact("text with x", {"PIN": "x"}) == "text with x"

    (said,) = [record.getMessage() for record in caplog.records]
    assert said.startswith("secret PIN is 1 character(s) long: values shorter than 4 ")
    assert "are not masked as [redacted:PIN]" in said
    assert "give it a longer value" in said


def test_a_value_of_the_minimum_length_is_masked_and_nothing_is_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    value = "a" * MIN_MASKED_LENGTH

    with caplog.at_level(logging.WARNING, logger="plait.secrets"):
        assert redact(f"key={value}", {"K": value}) == "key=[redacted:K]"

    assert caplog.records == []


def test_short_and_long_secrets_together_mask_only_the_long_one() -> None:
    secrets = {"PIN": "12", "TOKEN": "tok-5f1e2d3c4b"}

    assert redact("order 12 paid with tok-5f1e2d3c4b", secrets) == (
        "order 12 paid with [redacted:TOKEN]"
    )


def test_a_secret_that_holds_another_is_masked_whole() -> None:
    # Replaced in the order given, `abcd` first, `efgh` of the longer value was left visible.
    secrets = {"SHORT": "abcd", "LONG": "abcdefgh"}

    assert redact("abcdefgh and abcd", secrets) == "[redacted:LONG] and [redacted:SHORT]"


async def test_an_operator_reading_masked_output_is_told_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Source:
        scope = "environment"
        reads_environment = True

        async def read(self, names: Any) -> dict[str, str]:
            return {"PIN": "7"}

        def missing_message(self, names: Any) -> str:
            return "missing"

    body = make_spec(
        {
            "secrets": ["PIN"],
            "nodes": {"wait": {"kind": "wait", "for": "1h"}},
            "edges": [{"from": "START", "to": "wait"}, {"from": "wait", "to": "END"}],
        }
    ).spec.spec
    with caplog.at_level(logging.WARNING, logger="plait.secrets"):
        for _ in range(3):
            masked = await mask_spec_secrets({"answer": "777"}, body, Source())  # type: ignore[arg-type]
            assert masked == {"answer": "777"}

    said = [record.getMessage() for record in caplog.records]
    assert len(said) == 1 and said[0].startswith("secret PIN is 1 character(s) long")


async def test_a_tool_echoing_a_short_secret_is_not_garbled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("API_TOKEN", "o")  # every `o` of the result was masked
    spec = make_spec(
        {
            "secrets": ["API_TOKEN"],
            "state": {"out": {}},
            "tools": {"api": {"function": f"{FNS}:call_api", "secrets": ["API_TOKEN"]}},
            "nodes": {
                "call": {"kind": "tool", "tool": "api", "args": {"query": "'bob'"}, "output": "out"}
            },
            "edges": [{"from": "START", "to": "call"}, {"from": "call", "to": "END"}],
        }
    )
    run = Run(spec)

    out = await run.start({})

    assert out["out"] == {"answer": "hello bob", "debug": "used token o"}
    assert "[redacted" not in json.dumps(run.events, default=str)


def test_whoever_sets_a_short_secret_is_warned() -> None:
    assert short_secret_warning("PIN", "123") == (
        "secret PIN is 3 character(s) long: values shorter than 4 characters are not masked "
        "as [redacted:PIN] in tool results, errors, audit records and run output (masking them "
        "would garble every text holding those characters, and a value that short is no "
        "secret); give it a longer value"
    )
    assert short_secret_warning("TOKEN", "tok-5f1e") is None
