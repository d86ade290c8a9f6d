"""validate_paths / load_directory: folders, cross-file refs, and never raising."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from plait.engine.spec import validate as validate_module
from plait.engine.spec.validate import load_directory, validate_paths, validate_text
from tests.unit.spec.helpers import FIXTURES, fixture_text, mutate, one


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_fixture_folder_is_clean_and_refs_resolve_across_files() -> None:
    assert validate_paths([FIXTURES]) == []


def test_a_single_file_sees_specs_beside_it(tmp_path: Path) -> None:
    write(tmp_path, "minimal.yaml", fixture_text("minimal"))
    shutil.copy(FIXTURES / "team_tools.py", tmp_path / "team_tools.py")
    team = write(tmp_path, "team.yml", fixture_text("team"))
    assert validate_paths([team]) == []


def test_a_ref_with_no_spec_beside_it(tmp_path: Path) -> None:
    team = write(tmp_path, "team.yaml", fixture_text("team"))
    issue = one(validate_paths([team]), "unknown-ref")
    assert issue.file == str(team)
    assert issue.pointer == "/spec/nodes/child/ref"


def test_issues_name_their_file(tmp_path: Path) -> None:
    good = write(tmp_path, "a.yaml", fixture_text("minimal"))
    bad = write(
        tmp_path,
        "b.yaml",
        mutate(fixture_text("minimal"), "name: minimal", "name: other").replace(
            "model: fake", "model: nope"
        ),
    )
    issues = validate_paths([tmp_path])
    assert one(issues, "unknown-model").file == str(bad)
    assert all(issue.file != str(good) for issue in issues)


def test_duplicate_name_and_version(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", fixture_text("minimal"))
    second = write(tmp_path, "b.yaml", fixture_text("minimal"))
    issue = one(validate_paths([tmp_path]), "duplicate-spec")
    assert issue.file == str(second)
    assert issue.pointer == "/metadata/version"


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    issues = validate_paths([tmp_path / "nope.yaml", empty])
    assert one(issues, "file-not-found").file == str(tmp_path / "nope.yaml")
    assert one(issues, "no-specs").file == str(empty)


def test_yaml_and_schema_errors_come_back_as_issues(tmp_path: Path) -> None:
    path = write(tmp_path, "x.yaml", "a: 1\na: 2\n")
    assert one(validate_paths([path]), "yaml-duplicate-key").line == 2


def test_unexpected_exception_becomes_internal_issue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> list[object]:
        raise RuntimeError("boom")

    monkeypatch.setattr(validate_module, "lint", broken)
    path = write(tmp_path, "m.yaml", fixture_text("minimal"))
    issue = one(validate_paths([path]), "internal")
    assert "boom" in issue.message
    assert issue.fix
    assert one(validate_text(fixture_text("minimal")), "internal").line == 1


def test_load_directory_keeps_only_valid_specs(tmp_path: Path) -> None:
    write(tmp_path, "minimal.yaml", fixture_text("minimal"))
    write(tmp_path, "team.yaml", fixture_text("team"))
    write(tmp_path, "broken.yaml", "not: [a spec")
    write(
        tmp_path,
        "bad.yaml",
        mutate(fixture_text("minimal"), "name: minimal", "name: bad").replace("to: END", "to: x"),
    )
    registry = load_directory(tmp_path)
    assert sorted(spec.ref for spec in registry) == ["minimal@1.0.0", "team@1.2.0"]
    assert registry.resolve("team@1.2.0").path == tmp_path / "team.yaml"
