"""The git SHA recorded with a run: only when HEAD holds the spec file exactly."""

from __future__ import annotations

import subprocess
from pathlib import Path

from plait.engine.spec.provenance import git_sha


def git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=folder,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def test_sha_only_for_a_committed_unchanged_spec(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    spec = tmp_path / "specs" / "a.yaml"
    spec.parent.mkdir()
    spec.write_text("one\n")
    assert git_sha(spec) is None  # untracked (and no commit yet)

    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "first")
    head = git(tmp_path, "rev-parse", "HEAD")
    assert git_sha(spec) == head

    (tmp_path / "other.txt").write_text("unrelated edit\n")
    assert git_sha(spec) == head  # other files do not matter

    spec.write_text("two\n")
    assert git_sha(spec) is None  # edited after the commit
    git(tmp_path, "add", str(spec))
    assert git_sha(spec) is None  # staged is not committed either


def test_no_sha_outside_a_repository_or_without_a_path(tmp_path: Path) -> None:
    spec = tmp_path / "a.yaml"
    spec.write_text("x\n")
    assert git_sha(spec) is None
    assert git_sha(None) is None
