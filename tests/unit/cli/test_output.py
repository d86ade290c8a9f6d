"""Styled lines: written without rich where rich would write their text alone, byte for byte."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from plait.engine.spec.errors import SpecIssue
from plait.server.cli.output import (
    Part,
    PlainOutput,
    RichOutput,
    make_console,
    print_issues,
    styled_output,
)

TRICKY = [
    "",
    "plain",
    "a.yaml:3:5: error[unknown-node]: `answr` is not a node (at /spec/edges/1/to)",
    "[bold]not markup[/] :smile: not an emoji",
    "bell\a back\b vtab\v feed\f return\r crlf\r\n",
    "\x1b[31mescape\x1b[0m nul\x00 del\x7f",
    "wide 表示 and é (combining e\u0301) and 🙂",
    "trailing spaces   ",
    "line one\n  line two\n\nline four\n",
    "x" * 500,
    "tab\there",
]


def _plain(*parts: Part) -> str:
    out = io.StringIO()
    PlainOutput(out).line(*parts)
    return out.getvalue()


def _rich(*parts: Part) -> str:
    out = io.StringIO()
    RichOutput(make_console(out)).line(*parts)
    return out.getvalue()


@pytest.mark.parametrize("text", TRICKY)
def test_plain_lines_are_what_rich_writes(text: str) -> None:
    assert _plain((text, "red"), text, (text, "bold red")) == _rich(
        (text, "red"), text, (text, "bold red")
    )


@given(st.lists(st.tuples(st.text(), st.sampled_from(["red", "dim", "bold red"])), max_size=3))
def test_any_text_is_written_as_rich_writes_it(parts: list[tuple[str, str]]) -> None:
    assert _plain(*parts) == _rich(*parts)


def test_issues_print_location_code_and_fix() -> None:
    issue = SpecIssue("a.yaml", 3, 5, "/spec/nodes/x", "unknown node", "add it", "unknown-node")
    expected = ["a.yaml:3:5: error[unknown-node]: unknown node (at /spec/nodes/x)", "  fix: add it"]
    for output_of in (PlainOutput, lambda out: RichOutput(make_console(out))):
        out = io.StringIO()
        print_issues(output_of(out), [issue])
        assert out.getvalue().splitlines() == expected


def test_styles_reach_a_terminal_as_rich_renders_them() -> None:
    """``Text.assemble`` styles the line as the ``Text(style=...)`` and markup it replaced."""

    def terminal(out: io.StringIO) -> Console:
        return Console(
            file=out, force_terminal=True, color_system="standard", soft_wrap=True, highlight=False
        )

    out, expected = io.StringIO(), io.StringIO()
    RichOutput(terminal(out)).line(("a.yaml:1:1: error", "red"))
    RichOutput(terminal(out)).line(("2 error(s)", "bold red"), ", 0 warning(s) in 1 spec file")
    terminal(expected).print(Text("a.yaml:1:1: error", style="red"))
    terminal(expected).print("[bold red]2 error(s)[/], 0 warning(s) in 1 spec file")
    assert out.getvalue() == expected.getvalue()
    assert "\x1b[31m" in out.getvalue()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("variable", "value"), [("FORCE_COLOR", "1"), ("TTY_COMPATIBLE", "1"), ("COLUMNS", "0")]
)
def test_rich_prints_where_the_environment_changes_what_it_writes(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    assert isinstance(styled_output(io.StringIO()), PlainOutput)
    monkeypatch.setenv(variable, value)
    assert isinstance(styled_output(io.StringIO()), RichOutput)


def test_rich_prints_on_a_terminal() -> None:
    assert isinstance(styled_output(_Terminal()), RichOutput)
