"""Shared helpers of the spec tests: fixtures as text, one-line mutations, issue lookup."""

from __future__ import annotations

from pathlib import Path

from plait.engine.spec.errors import SpecIssue
from plait.engine.spec.registry import SpecRegistry
from plait.engine.spec.validate import validate_text

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_text(name: str) -> str:
    """The text of ``fixtures/<name>.yaml``."""
    return (FIXTURES / f"{name}.yaml").read_text()


def mutate(text: str, old: str, new: str) -> str:
    """Replace the one occurrence of ``old`` (failing loudly if it is not unique)."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


def line_of(text: str, needle: str) -> int:
    """1-based line that is exactly ``needle`` or else the first one containing it."""
    numbered = list(enumerate(text.splitlines(), start=1))
    exact = [i for i, line in numbered if line.rstrip() == needle.rstrip()]
    return (exact or [i for i, line in numbered if needle in line])[0]


def issues_of(text: str, registry: SpecRegistry | None = None) -> list[SpecIssue]:
    """Every issue of spec text."""
    return validate_text(text, "spec.yaml", registry)


def one(issues: list[SpecIssue], code: str) -> SpecIssue:
    """The single issue with ``code`` (fails, showing all issues, otherwise)."""
    found = [issue for issue in issues if issue.code == code]
    shown = "\n".join(issue.format() for issue in issues)
    assert len(found) == 1, f"expected one `{code}`, got:\n{shown}"
    return found[0]


def registry_with(*names: str) -> SpecRegistry:
    """A registry holding the named fixtures."""
    from plait.engine.spec.loader import parse_spec

    return SpecRegistry(parse_spec(fixture_text(name), f"{name}.yaml") for name in names)
