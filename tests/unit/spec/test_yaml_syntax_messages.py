"""YAML syntax errors are one located problem in words with a fix, where the mistake is.

The parser notices an unclosed bracket or quote lines later, where it gives up;
the problem must point at the bracket or quote that was opened.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plait.engine.spec.errors import SpecError, SpecIssue
from plait.engine.spec.loader import parse_spec
from tests.unit.spec.helpers import fixture_text, line_of, mutate

REPO = Path(__file__).resolve().parents[3]
MINIMAL = fixture_text("minimal")


def only_error(text: str) -> SpecIssue:
    with pytest.raises(SpecError) as caught:
        parse_spec(text, "spec.yaml")
    errors = [issue for issue in caught.value.issues if issue.severity == "error"]
    assert len(errors) == 1, "\n".join(issue.format() for issue in errors)
    return errors[0]


def test_unclosed_bracket_in_a_comment_block_names_where_it_was_opened() -> None:
    # The issue's example: a line inserted at line 6 of an example spec, inside
    # its header comment; the parser only stops at line 9.
    lines = (REPO / "specs" / "a2a-expense-agent.yaml").read_text().splitlines(keepends=True)
    lines.insert(5, "  : broken: [unclosed\n")
    issue = only_error("".join(lines))
    assert (issue.line, issue.column) == (6, 13)  # the `[` (1-based, like every position)
    assert issue.code == "yaml-unclosed"
    assert "`[`" in issue.message and "never closed" in issue.message
    assert "line 9" in issue.message  # where YAML gave up, for the curious
    assert "`]`" in issue.fix and "quote" in issue.fix


def test_unclosed_flow_mapping() -> None:
    text = mutate(
        MINIMAL, "      output: answer", "      args: {topic: state.topic\n      output: answer"
    )
    issue = only_error(text)
    assert issue.line == line_of(text, "args: {topic")
    assert issue.column == len("      args: {")
    assert "`{`" in issue.message
    assert "`}`" in issue.fix


def test_unclosed_quote_names_where_it_was_opened() -> None:
    text = mutate(
        MINIMAL,
        "      output: answer",
        '      prompt: "Write about {{ state.topic }}\n      output: answer',
    )
    issue = only_error(text)
    assert issue.line == line_of(text, 'prompt: "Write')
    assert issue.column == len('      prompt: "')
    assert issue.code == "yaml-unclosed"
    assert '`"`' in issue.message
    assert 'closing `"`' in issue.fix


def test_a_key_indented_deeper_than_its_sibling_is_an_indentation_problem() -> None:
    # One space too many before `output`: ruamel says "mapping values are not allowed here".
    text = mutate(MINIMAL, "      output: answer", "       output: answer")
    issue = only_error(text)
    assert issue.line == line_of(text, "       output: answer")
    assert issue.code == "yaml-indentation"
    assert "indented" in issue.message
    assert f"column {len('      ') + 1}" in issue.fix


def test_a_key_indented_to_no_level_above_is_an_indentation_problem() -> None:
    # `output` one space short: it lines up with no mapping above it.
    text = mutate(MINIMAL, "      output: answer", "     output: answer")
    issue = only_error(text)
    assert issue.line == line_of(text, "     output: answer")
    assert issue.code == "yaml-indentation"
    assert "column 6" in issue.message
    assert "column 7" in issue.fix
