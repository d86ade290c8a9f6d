"""Lint rules of the runtime limits: each mutation of a clean spec gives exactly its issue."""

from __future__ import annotations

import pytest

from tests.unit.spec.helpers import fixture_text, issues_of, line_of, mutate, one

CLEAN = mutate(
    fixture_text("minimal"),
    '        - content: "A short answer."\n',
    '        - content: "A short answer."\n'
    "      price: {input_per_million: 1, output_per_million: 2}\n"
    "    cheap:\n"
    "      provider: scripted\n"
    "      price: {input_per_million: 0.1, output_per_million: 0.2}\n",
) + (
    "  budgets:\n"
    "    max_steps: 10\n"
    "    max_cost: 0.5\n"
    "    on_exceed: fallback\n"
    "    fallback_model: cheap\n"
)


def test_the_budget_fixture_is_clean() -> None:
    assert issues_of(CLEAN) == []


@pytest.mark.parametrize(
    ("code", "old", "new", "pointer", "line", "severity"),
    [
        (
            "budget-empty",
            "    max_steps: 10\n    max_cost: 0.5\n",
            "",
            "/spec/budgets",
            "budgets:",
            "warning",
        ),
        (
            "budget-price-missing",
            "      price: {input_per_million: 0.1, output_per_million: 0.2}\n",
            "",
            "/spec/models/cheap",
            "cheap:",
            "error",
        ),
        (
            "budget-fallback-missing",
            "    fallback_model: cheap\n",
            "",
            "/spec/budgets/on_exceed",
            "on_exceed: fallback",
            "error",
        ),
        (
            "budget-fallback-unknown",
            "fallback_model: cheap",
            "fallback_model: chaep",
            "/spec/budgets/fallback_model",
            "fallback_model: chaep",
            "error",
        ),
        (
            "budget-fallback-unused",
            "on_exceed: fallback",
            "on_exceed: fail",
            "/spec/budgets/fallback_model",
            "fallback_model: cheap",
            "warning",
        ),
    ],
)
def test_rule(code: str, old: str, new: str, pointer: str, line: str, severity: str) -> None:
    text = mutate(CLEAN, old, new)
    issue = one([i for i in issues_of(text) if i.pointer == pointer], code)
    assert issue.line == line_of(text, line), issue.format()
    assert issue.severity == severity


def test_unknown_fallback_suggests_the_model() -> None:
    text = mutate(CLEAN, "fallback_model: cheap", "fallback_model: chaep")
    issue = one(issues_of(text), "budget-fallback-unknown")
    assert "Did you mean `cheap`?" in issue.message


def test_on_exceed_is_one_of_four_actions() -> None:
    text = mutate(CLEAN, "on_exceed: fallback", "on_exceed: panic")
    issue = one(issues_of(text), "schema-value")
    assert issue.pointer == "/spec/budgets/on_exceed"
