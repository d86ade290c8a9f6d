"""Semantic versions: their order, and the ranges a migration's ``from`` names."""

from __future__ import annotations

import re
from typing import Any

_COMPARATOR = re.compile(
    r"(>=|<=|>|<|=)?\s*(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)"
)


def version_key(version: str) -> tuple[Any, ...]:
    """Sort key of a semantic version by SemVer 2.0 precedence (build metadata ignored).

    Hand-written because no semver library is a dependency and the rule is
    short: a pre-release sorts before its release; numeric identifiers sort
    numerically and before alphanumeric ones.
    """
    core, _, prerelease = version.split("+", 1)[0].partition("-")
    numbers = tuple(int(part) for part in core.split("."))
    if not prerelease:
        return (numbers, 1, ())
    identifiers = tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in prerelease.split(".")
    )
    return (numbers, 0, identifiers)


def in_range(version: str, spec_range: str) -> bool:
    """Whether ``version`` satisfies every comparator of ``spec_range`` (``">=1.0.0 <1.1.0"``;
    a bare version means ``=``)."""
    key = version_key(version)
    found = False
    for operator, bound in _COMPARATOR.findall(spec_range):
        found = True
        other = version_key(bound)
        held = {
            "": key == other,
            "=": key == other,
            ">=": key >= other,
            "<=": key <= other,
            ">": key > other,
            "<": key < other,
        }[operator]
        if not held:
            return False
    return found
