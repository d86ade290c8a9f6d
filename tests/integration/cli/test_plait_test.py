"""``plait test`` as a subprocess: the examples' tests, a failing one, JUnit, lint of tests."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from xml.etree import ElementTree

from tests.integration.cli.conftest import SPECS, PlaitRunner

#: Examples that need a peer running elsewhere (an A2A agent served on a port).
NEEDS_A_PEER = {"a2a-expense-caller"}


def test_every_example_spec_ships_tests_that_pass(plait: PlaitRunner, tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    result = plait("test", SPECS, "--junit", report)

    assert result.code == 0, result.stdout + result.stderr
    summary = re.search(r"^(\d+) passed, 0 failed in [\d.]+s", result.stdout, re.MULTILINE)
    assert summary, result.stdout
    suites = ElementTree.parse(report).getroot().findall("testsuite")
    tested = {suite.get("name") for suite in suites}
    specs = {path.stem for path in SPECS.glob("*.yaml")}
    assert tested == specs - NEEDS_A_PEER
    cases = [case for suite in suites for case in suite.findall("testcase")]
    assert len(cases) == int(summary.group(1))
    assert all(case.find("failure") is None for case in cases)
    assert "✓ refund-approval > large_refund_edited" in result.stdout


def _copy(tmp_path: Path, name: str) -> Path:
    shutil.copy(SPECS / f"{name}.yaml", tmp_path / f"{name}.yaml")
    shutil.copytree(SPECS / "plait_examples", tmp_path / "plait_examples")
    return tmp_path / f"{name}.yaml"


def test_a_failing_assertion_says_what_it_read(plait: PlaitRunner, tmp_path: Path) -> None:
    spec = _copy(tmp_path, "refund-approval")
    text = spec.read_text(encoding="utf-8")
    spec.write_text(text.replace("state.refund.amount == 90.0", "state.refund.amount == 95.0"))
    report = tmp_path / "junit.xml"

    result = plait("test", spec, "--junit", report)

    assert result.code == 6, result.stdout + result.stderr
    assert "✗ refund-approval > large_refund_edited" in result.stdout
    assert "expected: state.refund.amount == 95.0" in result.stdout
    assert "'amount': 90.0" in result.stdout  # what it read
    assert "3 passed, 1 failed" in result.stdout
    (failure,) = ElementTree.parse(report).getroot().iter("failure")
    assert "state.refund.amount == 95.0" in (failure.text or "")


def test_an_example_replaces_a_models_replies(plait: PlaitRunner, tmp_path: Path) -> None:
    """The planner example's reviewer approves at once: the loop runs one round."""
    spec = _copy(tmp_path, "planner-team")
    result = plait("test", spec, "--example", "csv_export_approved_at_once")
    assert result.code == 0, result.stdout + result.stderr
    assert "1 passed, 0 failed" in result.stdout


def test_tests_are_linted_like_the_rest_of_the_spec(plait: PlaitRunner, tmp_path: Path) -> None:
    spec = _copy(tmp_path, "planner-team")
    text = spec.read_text(encoding="utf-8")
    override = "        reviewer:\n          script:"
    text = text.replace(override, override.replace("reviewer", "reveiwer"))
    text = text.replace("        - state.revisions == 0", "        - stat.revisions == 0")
    spec.write_text(text, encoding="utf-8")

    result = plait("test", spec)

    assert result.code == 1, result.stdout + result.stderr
    assert "example-unknown-model" in result.stdout
    assert "Did you mean `reviewer`?" in result.stdout
    assert "cel-unknown-root" in result.stdout
    assert "nothing was run" in result.stderr


def test_no_tests_is_a_usage_error(plait: PlaitRunner) -> None:
    result = plait("test", SPECS / "a2a-expense-caller.yaml")
    assert result.code == 2
    assert "add `expect:` assertions" in result.stderr
