"""Problems found in a spec, each located in its source and paired with a fix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from pydantic import ValidationError

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class SpecIssue:
    """One problem in a spec: where it is, what is wrong, and how to fix it.

    ``line`` and ``column`` are 1-based; ``pointer`` is the JSON pointer
    (RFC 6901) of the offending value, ``""`` for the whole document.
    ``code`` is stable (documented in docs/spec-language.md) so tools and
    tests can rely on it.
    """

    file: str
    line: int
    column: int
    pointer: str
    message: str
    fix: str
    code: str
    severity: Severity = "error"

    def format(self) -> str:
        """``file:line:col: error[code]: message`` plus the pointer and the fix."""
        where = f" (at {self.pointer})" if self.pointer else ""
        return (
            f"{self.file}:{self.line}:{self.column}: {self.severity}[{self.code}]: "
            f"{self.message}{where}\n  fix: {self.fix}"
        )

    def to_dict(self) -> dict[str, str | int]:
        """JSON-ready form, for ``plait validate --format json`` and the HTTP API."""
        return asdict(self)


class SpecError(Exception):
    """A spec that cannot be loaded; ``issues`` says why (never empty)."""

    def __init__(self, issues: Sequence[SpecIssue]) -> None:
        self.issues = list(issues)
        super().__init__("\n".join(issue.format() for issue in self.issues))


def short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to about ``limit`` characters: messages quote values, some huge."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 12]}… ({len(text):,} chars)"


def has_errors(issues: Sequence[SpecIssue]) -> bool:
    """True when any issue is an error (warnings alone do not fail validation)."""
    return any(issue.severity == "error" for issue in issues)


def validation_problems(error: ValidationError, whole: str = "value") -> str:
    """A pydantic error as one line: ``field.path: message; ...`` (``whole``: the value itself)."""
    return "; ".join(
        f"{'.'.join(str(part) for part in issue['loc']) or whole}: {issue['msg']}"
        for issue in error.errors()
    )
