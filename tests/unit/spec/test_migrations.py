"""``spec.migrations``: which one applies, the state it computes, and its lint against the
old version's state and this one's (decision 95)."""

from __future__ import annotations

import pytest

from plait.engine.spec.expressions import ExpressionError
from plait.engine.spec.loader import parse_spec
from plait.engine.spec.migrations import find_migration, migrated_values
from plait.engine.spec.semver import in_range
from tests.unit.spec.helpers import fixture_text, issues_of, line_of, mutate, one, registry_with

NEW = fixture_text("upgrade-demo-1.1.0")


@pytest.mark.parametrize(
    ("version", "spec_range", "held"),
    [
        ("1.0.0", "1.0.0", True),
        ("1.0.1", "1.0.0", False),
        ("1.0.1", ">=1.0.0 <1.1.0", True),
        ("1.1.0", ">=1.0.0 <1.1.0", False),
        ("1.1.0-rc.1", ">=1.0.0 <1.1.0", True),
        ("0.9.9", ">=1.0.0 <1.1.0", False),
        ("2.0.0", ">1.0.0", True),
        ("1.0.0", "<=1.0.0", True),
        ("1.0.0+build.7", "=1.0.0", True),
    ],
)
def test_version_ranges(version: str, spec_range: str, held: bool) -> None:
    assert in_range(version, spec_range) is held


def test_the_first_matching_migration_applies() -> None:
    text = mutate(
        NEW,
        '    - from: ">=1.0.0 <1.1.0"\n',
        '    - from: "0.9.0"\n      state: {client: "\'old\'"}\n    - from: ">=1.0.0 <1.1.0"\n',
    )
    spec = parse_spec(text).spec
    assert find_migration(spec, "0.9.0") is spec.spec.migrations[0]
    assert find_migration(spec, "1.0.3") is spec.spec.migrations[1]
    assert find_migration(spec, "0.8.0") is None


def test_mapped_state_renames_computes_keeps_and_drops() -> None:
    text = mutate(NEW, "      nodes: {review: approve_refund}\n", "      drop: [reply]\n")
    spec = parse_spec(text).spec
    old = {"customer": "Ada", "amount": 12, "reply": "noted", "decision": {"decision": "edit"}}
    written, kept = migrated_values(spec.spec.migrations[0], old, spec)
    assert written == {"client": "Ada", "amount_cents": 1200}
    # `reply` is dropped (starts from its default); `summary` is new and unmapped.
    assert kept == {"decision"}


def test_an_expression_that_fails_on_the_state_says_which() -> None:
    spec = parse_spec(NEW).spec
    with pytest.raises(ExpressionError, match=r"state\.amount"):
        migrated_values(spec.spec.migrations[0], {"customer": "Ada", "amount": "12"}, spec)


def test_a_valid_migration_has_no_issues_beside_its_old_version() -> None:
    assert issues_of(NEW, registry_with("upgrade-demo-1.0.0")) == []


def test_without_the_old_version_it_warns_that_it_cannot_check() -> None:
    issue = one(issues_of(NEW), "migration-old-version-unknown")
    assert issue.severity == "warning"
    assert issue.line == line_of(NEW, '    - from: ">=1.0.0 <1.1.0"')
    assert "plait validate new.yaml old.yaml" in issue.fix


@pytest.mark.parametrize(
    ("code", "old", "new", "line", "fix"),
    [
        (
            "migration-unknown-old-field",
            "client: state.customer",
            "client: state.custmer",
            "client: state.custmer",
            "Did you mean `customer`?",
        ),
        (
            "migration-unknown-field",
            "client: state.customer",
            "clients: state.customer",
            "clients: state.customer",
            "Did you mean `client`?",
        ),
        (
            "migration-type-mismatch",
            "amount_cents: state.amount * 100",
            "amount_cents: state.customer",
            "amount_cents: state.customer",
            "int(state.customer)",
        ),
        (
            "migration-unknown-node",
            "nodes: {review: approve_refund}",
            "nodes: {review: approve}",
            "nodes: {review: approve}",
            "Did you mean `approve_refund`?",
        ),
        (
            "migration-unknown-old-node",
            "nodes: {review: approve_refund}",
            "nodes: {reviewer: approve_refund}",
            "nodes: {reviewer: approve_refund}",
            "`review`",
        ),
        (
            "cel-unknown-root",
            "client: state.customer",
            "client: input.customer",
            "client: input.customer",
            "state.input",
        ),
        (
            "migration-from-itself",
            '- from: ">=1.0.0 <1.1.0"',
            '- from: ">=1.0.0"',
            '- from: ">=1.0.0"',
            "<1.1.0",
        ),
        (
            "migration-drop-written",
            "      nodes: {review: approve_refund}\n",
            "      nodes: {review: approve_refund}\n      drop: [client]\n",
            "drop: [client]",
            "not both",
        ),
    ],
)
def test_lint_names_the_place_and_the_fix(
    code: str, old: str, new: str, line: str, fix: str
) -> None:
    text = mutate(NEW, old, new)
    issue = one(issues_of(text, registry_with("upgrade-demo-1.0.0")), code)
    assert issue.severity == "error"
    assert issue.file == "spec.yaml"
    assert issue.line == line_of(text, line)
    assert issue.column > 1
    assert fix in issue.fix


def test_an_old_approval_that_is_gone_and_not_renamed_is_a_warning() -> None:
    text = mutate(NEW, "      nodes: {review: approve_refund}\n", "")
    issue = one(issues_of(text, registry_with("upgrade-demo-1.0.0")), "migration-node-gone")
    assert issue.severity == "warning"
    assert "`nodes: {review: <its new id>}`" in issue.fix
