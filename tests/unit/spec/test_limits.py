"""The limits on spec YAML: refused quickly, located where they were crossed, in Plait's words.

Each of these inputs once took seconds (a 4 KB spec of 1,000 nested ``[``: 8.8 s)
or ended as ``internal`` ("this is a bug in Plait").
"""

from __future__ import annotations

import pytest

from plait.engine.models.scripted import ScriptedChatModel
from plait.engine.spec.errors import SpecIssue
from plait.engine.spec.limits import MAX_CHARS, MAX_DEPTH, MAX_INT_DIGITS
from plait.engine.spec.models import ScriptedResponse
from tests.unit.spec.helpers import fixture_text, issues_of, line_of, mutate, one

MINIMAL = fixture_text("minimal")
HEAD = "apiVersion: plait/v1\nkind: Graph\nmetadata: {name: a, version: '1.0.0'}\nspec:\n"


def codes(issues: list[SpecIssue]) -> list[str]:
    return [issue.code for issue in issues]


def test_deep_brackets_are_refused_where_the_limit_is_crossed() -> None:
    text = HEAD + "  nodes: " + "[" * 1000 + "\n"
    issue = one(issues_of(text), "yaml-too-deep")
    # Line 5; `  nodes: ` is 9 characters, the top-level mapping and `spec` are two levels.
    assert (issue.line, issue.column) == (5, 10 + MAX_DEPTH - 2)
    assert str(MAX_DEPTH) in issue.message


def test_a_file_of_brackets_is_refused_at_the_first_level_too_many() -> None:
    issue = one(issues_of("[" * 50_000), "yaml-too-deep")
    assert (issue.line, issue.column) == (1, MAX_DEPTH + 1)


def test_closed_deep_nesting_names_its_pointer() -> None:
    text = HEAD + "  state: {x: {type: any, default: " + "[" * 120 + "]" * 120 + "}}\n"
    issue = one(issues_of(text), "yaml-too-deep")
    assert issue.line == 5
    assert issue.pointer.startswith("/spec/state/x/default/0/0/")


def test_nesting_within_the_limit_is_read() -> None:
    depth = MAX_DEPTH - 6  # the state field's own levels
    text = HEAD + "  state: {x: {type: any, default: " + "[" * depth + "]" * depth + "}}\n"
    assert "yaml-too-deep" not in codes(issues_of(text))


def test_billion_laughs_is_refused_at_the_alias_that_crosses_the_limit() -> None:
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    text = "\n".join(lines) + "\n"
    issue = one(issues_of(text), "yaml-too-large")
    assert issue.line == 6  # l5: 9**6 values
    assert issue.pointer == "/l5/1"  # l0..l4 and l5's first alias: 141,163 values
    assert "alias" in issue.message


def test_a_spec_longer_than_the_limit_is_refused_at_that_character() -> None:
    filler = "# " + "x" * 98 + "\n"
    text = MINIMAL + filler * (MAX_CHARS // len(filler) + 1)
    issue = one(issues_of(text), "yaml-too-large")
    assert issue.line == MINIMAL.count("\n") + (MAX_CHARS - len(MINIMAL)) // len(filler) + 1
    assert issue.column > 1


@pytest.mark.parametrize("digits", ["9" * 5000, "0x" + "F" * 5000, "-" + "1" * 2000])
def test_a_long_integer_is_refused_where_it_is_written(digits: str) -> None:
    text = mutate(MINIMAL, "topic: {type: string}", f"topic: {{type: any, default: {digits}}}")
    issue = one(issues_of(text), "yaml-number-too-long")
    assert (issue.line, issue.pointer) == (line_of(text, "topic:"), "/spec/state/topic/default")
    assert f"{MAX_INT_DIGITS:,}" in issue.message


def test_a_quoted_long_number_is_text() -> None:
    text = mutate(
        MINIMAL, "topic: {type: string}", f"topic: {{type: string, default: '{'9' * 5000}'}}"
    )
    assert issues_of(text) == []


def test_an_impossible_date_is_located() -> None:
    text = mutate(MINIMAL, "topic: {type: string}", "topic: {type: string, default: 2024-13-45}")
    issue = one(issues_of(text), "yaml-value")
    assert (issue.line, issue.pointer) == (line_of(text, "topic:"), "/spec/state/topic/default")
    assert "quote it" in issue.fix


def test_a_deeply_nested_template_is_a_template_error() -> None:
    prompt = "{{ " + "(" * 1000 + "state.topic" + ")" * 1000 + " }}"
    text = mutate(MINIMAL, '"Answer briefly: {{ state.topic }}"', f'"{prompt}"')
    issue = one(issues_of(text), "template-syntax")
    assert "too deeply" in issue.message
    assert issue.line == line_of(text, "prompt:")


def test_nested_blocks_in_a_template_are_a_template_error() -> None:
    prompt = "{% if state.topic %}" * 300
    text = mutate(MINIMAL, '"Answer briefly: {{ state.topic }}"', f'"{prompt}"')
    assert "template-syntax" in codes(issues_of(text))


def test_a_regex_nested_too_deeply_is_an_invalid_regex() -> None:
    pattern = "(" * 1000 + "a" + ")" * 1000
    text = mutate(MINIMAL, '- content: "A short answer."', f"- {{when: '{pattern}', content: x}}")
    issue = one(issues_of(text), "invalid-regex")
    assert "too deeply" in issue.message
    with pytest.raises(ValueError, match="too deeply"):
        ScriptedChatModel(script=[ScriptedResponse(when=pattern)])


def test_a_huge_cel_expression_is_an_expression_error_not_a_panic() -> None:
    # The CEL library panics (a BaseException) formatting an error this far in.
    route = "1 + " * 20_000 + ")"
    text = mutate(
        MINIMAL,
        "- {from: answer, to: END}",
        f"- {{from: answer, switch: [{{when: '{route}', to: END}}], default: END}}",
    )
    issues = issues_of(text)
    assert "internal" not in codes(issues)
    assert any("characters long" in issue.message for issue in issues)


def test_error_messages_quote_huge_values_briefly() -> None:
    text = mutate(MINIMAL, 'version: "1.0.0"', f"version: '{'x' * 100_000}'")
    issue = one(issues_of(text), "version-format")
    assert len(issue.message) < 300
