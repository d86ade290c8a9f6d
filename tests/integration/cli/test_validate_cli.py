"""``plait validate`` as a user runs it: exit codes, text and JSON reports, garbage files."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.integration.cli.conftest import SPECS, TEST_SPECS, PlaitRunner

ISSUE_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error\[(?P<code>[\w-]+)\]: .+")

GARBAGE: dict[str, bytes] = {
    "empty.yaml": b"",
    "binary.yaml": bytes(range(256)) * 4,
    "list.yaml": b"- 1\n- 2\n",
    "prose.yaml": b"this is not a spec at all\n",
    "broken.yaml": b"apiVersion: plait/v1\nkind: [Graph\nmetadata: {name: x\n",
    "tabs.yaml": b"apiVersion: plait/v1\n\tkind: Graph\n",
    "wrong-kinds.yaml": (
        b"apiVersion: plait/v1\nkind: Graph\nmetadata: {name: Bad Name, version: 1.0}\n"
        b"spec:\n  nodes:\n    a: {kind: teleport}\n"
    ),
}


def test_example_specs_are_valid(plait: PlaitRunner) -> None:
    result = plait("validate", SPECS, TEST_SPECS)
    assert result.code == 0, result.stdout + result.stderr
    assert "valid" in result.stdout


def test_garbage_gives_located_errors_and_exit_1(plait: PlaitRunner, tmp_path: Path) -> None:
    for name, content in GARBAGE.items():
        (tmp_path / name).write_bytes(content)

    result = plait("validate", tmp_path)

    assert result.code == 1
    assert "Traceback" not in result.stdout + result.stderr
    issues = [m for line in result.stdout.splitlines() if (m := ISSUE_LINE.match(line))]
    # Every garbage file gets at least one located error, and nothing else is reported.
    assert {Path(m["file"]).name for m in issues} == set(GARBAGE), result.stdout
    assert result.stdout.count("fix:") >= len(issues)


def test_json_format_lists_issue_dicts(plait: PlaitRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(GARBAGE["wrong-kinds.yaml"])
    good = SPECS / "planner-team.yaml"

    result = plait("validate", "--format", "json", bad, good)

    assert result.code == 1
    issues = json.loads(result.stdout)
    assert issues and {issue["file"] for issue in issues} == {str(bad)}
    for issue in issues:
        assert set(issue) >= {"file", "line", "column", "pointer", "message", "fix", "code"}
        assert issue["line"] >= 1 and issue["column"] >= 1


def test_json_format_of_valid_specs_is_an_empty_list(plait: PlaitRunner) -> None:
    result = plait("validate", "--format", "json", SPECS)
    assert result.code == 0
    assert json.loads(result.stdout) == []


def test_missing_path_is_an_error_not_a_crash(plait: PlaitRunner, tmp_path: Path) -> None:
    result = plait("validate", tmp_path / "nope.yaml")
    assert result.code == 1
    assert "Traceback" not in result.stderr
    assert "nope.yaml" in result.stdout
