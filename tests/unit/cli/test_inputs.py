"""Parsing ``plait run`` options: JSON input, examples, decisions, resume commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from plait.engine.spec.loader import load_spec
from plait.server.cli.exits import CliError, ExitCode
from plait.server.cli.inputs import make_decision, parse_json_object, pick_example
from plait.server.cli.run_request import DecisionChoice, parse_request, resume_command

REFUND = Path(__file__).resolve().parents[3] / "specs" / "refund-approval.yaml"


def test_json_object_inline_and_from_file(tmp_path: Path) -> None:
    assert parse_json_object('{"a": 1}', "--input") == {"a": 1}
    path = tmp_path / "in.json"
    path.write_text('{"b": [1, 2]}')
    assert parse_json_object(f"@{path}", "--input") == {"b": [1, 2]}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{oops", "--input is not valid JSON: Expecting property name"),
        ("[1]", "--input must be a JSON object, not list"),
        ("42", "--input must be a JSON object, not int"),
        ("@/no/such/file.json", "cannot read --input file /no/such/file.json"),
    ],
)
def test_bad_json_input_is_a_usage_error(text: str, message: str) -> None:
    with pytest.raises(CliError) as caught:
        parse_json_object(text, "--input")
    assert caught.value.code is ExitCode.USAGE
    assert caught.value.message.startswith(message)


def test_file_that_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "bin.json"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(CliError, match="not UTF-8"):
        parse_json_object(f"@{path}", "--input")


def test_examples_by_name_or_first() -> None:
    spec = load_spec(REFUND).spec
    assert pick_example(spec, None).name == "large_refund_approved"
    assert pick_example(spec, "small_refund").input["amount"] == 12.5
    with pytest.raises(CliError, match=r"no example 'nope'.*large_refund_approved, "):
        pick_example(spec, "nope")


def test_decisions() -> None:
    assert make_decision("approve", None, "ok") == {
        "decision": "approve",
        "arguments": None,
        "comment": "ok",
    }
    edit = make_decision("edit", '{"amount": 5}', None)
    assert edit["arguments"] == {"amount": 5}
    with pytest.raises(CliError, match="edit needs the new arguments"):
        make_decision("edit", None, None)
    with pytest.raises(CliError, match="--arguments goes with --decision edit only"):
        make_decision("reject", "{}", None)


def test_request_option_conflicts() -> None:
    with pytest.raises(CliError, match="--input or --example, not both"):
        parse_request(REFUND, "{}", "small_refund", None, None, None, None)
    with pytest.raises(CliError, match="go with --decision"):
        parse_request(REFUND, None, None, "t", None, None, "a comment")
    request = parse_request(REFUND, None, None, "t-1", DecisionChoice.reject, None, "no")
    assert request.decision == {"decision": "reject", "arguments": None, "comment": "no"}
    assert request.interactive is False  # pytest's stdin is not a terminal


def test_resume_command_quotes_paths() -> None:
    assert (
        resume_command(Path("my specs/a.yaml"), "t-1", "approve")
        == "plait run 'my specs/a.yaml' --thread t-1 --decision approve"
    )
