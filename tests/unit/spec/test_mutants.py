"""Mutated example specs: every one gets located errors, never ``internal``, and never hangs.

The corpus (tests/spec_mutants.py) is seeded, so a failure names a mutant that
can be rebuilt. Timing distributions live in bench/validate_mutants.py; here
each mutant only has to finish within a deadline far above the 1 s the limits
aim at (before them, 49 of 2,000 mutants took over 5 s, the slowest 42 s).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from plait.engine.spec.validate import validate_paths
from tests.spec_mutants import mutants

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted(ROOT.joinpath("specs").glob("*.yaml"))
MUTANTS_PER_SPEC = 200
#: Proves "not stuck", not speed: the limits make each of these take well under 1 s.
DEADLINE_SECONDS = 5.0
#: Codes whose position must be the payload's line: the limits say where they were crossed.
LIMIT_CODES = frozenset({"yaml-too-deep", "yaml-too-large", "yaml-number-too-long"})


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda path: path.name)
def test_every_mutant_gets_located_errors(spec: Path, tmp_path: Path) -> None:
    target = tmp_path / spec.name
    seed = EXAMPLES.index(spec)
    failures: list[str] = []
    for number, mutant in enumerate(mutants(spec.read_text(), seed, MUTANTS_PER_SPEC)):
        target.write_text(mutant.text, encoding="utf-8", errors="surrogatepass")
        started = time.monotonic()
        issues = validate_paths([target])
        took = time.monotonic() - started
        name = f"mutant {number} (seed {seed}, {mutant.operation} at line {mutant.line})"
        lines = mutant.text.count("\n") + 1
        if took > DEADLINE_SECONDS:
            failures.append(f"{name}: took {took:.1f}s")
        for issue in issues:
            if issue.code == "internal":
                failures.append(f"{name}: {issue.message}")
            elif not (1 <= issue.line <= lines and issue.column >= 1):
                failures.append(f"{name}: {issue.code} at {issue.line}:{issue.column} of {lines}")
            elif (
                issue.code in LIMIT_CODES
                and mutant.payload is not None
                and issue.line != mutant.line
            ):
                failures.append(f"{name}: {issue.code} at line {issue.line}, not {mutant.line}")
    assert failures == []


def test_the_corpus_is_deterministic() -> None:
    text = EXAMPLES[0].read_text()
    assert list(mutants(text, 3, 20)) == list(mutants(text, 3, 20))
    assert list(mutants(text, 3, 20)) != list(mutants(text, 4, 20))
