"""Lines of styled text: rich prints them on a terminal; elsewhere they are written as rich
would write them there, without loading rich.

On a stream that is not a terminal (a pipe, a file, a pre-commit hook's capture) rich drops
the styles and writes the text alone. ``plait validate`` prints only such lines, so there it
writes that text itself and skips importing rich, about 40 ms of its start-up
(docs/decisions.md 85). Wherever rich could write anything else (a terminal, a variable
forcing colours, a notebook, Windows' console), rich prints.
"""

from __future__ import annotations

import builtins
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:
    from rich.console import Console

    from plait.engine.spec import SpecIssue

#: Part of a line: text, or text and a rich style.
Part = str | tuple[str, str]

#: What rich's ``Text`` removes: bell, backspace, vertical tab, form feed, carriage return.
_CONTROL_CODES = dict.fromkeys([7, 8, 11, 12, 13])
#: rich appends this to the reason of a ``UnicodeEncodeError`` while writing.
_ENCODING_HINT = "\n*** You may need to add PYTHONIOENCODING=utf-8 to your environment ***"


def make_console(file: TextIO | None = None, *, stderr: bool = False) -> Console:
    """A console that never wraps long lines (paths, ids and commands must stay copyable)."""
    from rich.console import Console

    return Console(file=file, stderr=stderr, soft_wrap=True, highlight=False)


class Output(Protocol):
    """Where lines of styled text go."""

    def line(self, *parts: Part) -> None:
        """Print one line made of ``parts``."""


class RichOutput:
    """Lines printed by a rich console."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def line(self, *parts: Part) -> None:
        """Print the parts as one ``Text``."""
        from rich.text import Text

        self.console.print(Text.assemble(*parts))


class PlainOutput:
    """Lines written as rich writes them to a stream that is not a terminal."""

    def __init__(self, file: TextIO | None = None, *, stderr: bool = False) -> None:
        self._file = file
        self._stderr = stderr
        self._quiet = False

    def line(self, *parts: Part) -> None:
        """Write the parts' text, without rich's control codes, and a newline."""
        if self._quiet:
            return
        text = "".join(part if isinstance(part, str) else part[0] for part in parts)
        if "\t" in text:  # rich expands tabs by the width of what comes before: let it
            RichOutput(make_console(self._file, stderr=self._stderr)).line(*parts)
            return
        # Looked up on each line, as rich does (a test may swap sys.stdout).
        file = self._file or (sys.stderr if self._stderr else sys.stdout)
        try:
            try:
                file.write(text.translate(_CONTROL_CODES) + "\n")
            except UnicodeEncodeError as error:
                error.reason = f"{error.reason}{_ENCODING_HINT}"
                raise
            file.flush()
        except BrokenPipeError:
            # What rich's Console.on_broken_pipe does: no more output, exit 1.
            self._quiet = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise SystemExit(1) from None


def styled_output(file: TextIO | None = None, *, stderr: bool = False) -> Output:
    """A :class:`PlainOutput` where rich would write plain text, else a :class:`RichOutput`."""
    stream = file or (sys.stderr if stderr else sys.stdout)
    if _rich_writes_plain_text(stream):
        return PlainOutput(file, stderr=stderr)
    return RichOutput(make_console(file, stderr=stderr))


def _rich_writes_plain_text(stream: TextIO | None) -> bool:
    """Whether rich's console would write to ``stream`` the text of its lines alone.

    Rich styles a terminal's lines, or any stream's when ``FORCE_COLOR`` or
    ``TTY_COMPATIBLE`` is set; in a notebook (``get_ipython``) it displays them; on
    Windows it may write through the console API; with ``COLUMNS=0`` it prints nothing.
    """
    if sys.platform == "win32" or hasattr(builtins, "get_ipython"):
        return False
    if "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ:
        return False
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) < 1:
        return False
    if stream is None or hasattr(stream, "rich_proxied_file"):
        return False
    try:
        return not stream.isatty()
    except ValueError:  # closed: leave it to rich
        return False


def print_issues(output: Output, issues: Sequence[SpecIssue]) -> None:
    """``file:line:col: error[code]: message`` in red (yellow for a warning), then the fix, dim."""
    for issue in issues:
        head, _, fix = issue.format().partition("\n")
        output.line((head, "red" if issue.severity == "error" else "yellow"))
        if fix:
            output.line((fix, "dim"))
