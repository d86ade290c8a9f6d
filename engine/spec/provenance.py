"""Which git commit a spec file comes from, when that commit describes it exactly."""

from __future__ import annotations

import subprocess
from pathlib import Path

_GIT_TIMEOUT_SECONDS = 5.0


def git_sha(spec_path: Path | None) -> str | None:
    """``HEAD`` of the repository holding ``spec_path``, if the file is committed unchanged.

    A SHA is only worth recording when checking it out gives back the spec that
    ran. So it is ``None`` when the file is not in a git work tree, is not
    tracked, or differs from ``HEAD`` (staged or unstaged edits); also when
    git is not installed. Changes to other files do not matter: the run's
    digest already pins the spec's content, the SHA says where to find it.
    """
    if spec_path is None:
        return None
    path = spec_path.resolve()
    folder = path.parent
    try:
        sha = _git(folder, "rev-parse", "--verify", "HEAD")
        # Tracked at HEAD: `git ls-files` prints nothing for an untracked file.
        if sha is None or not _git(folder, "ls-files", "--", path.name):
            return None
        # Clean: no staged or unstaged differences against HEAD for this file.
        if _git(folder, "status", "--porcelain", "--", path.name) != "":
            return None
    except (OSError, subprocess.SubprocessError):
        return None
    return sha


def _git(folder: Path, *args: str) -> str | None:
    """Run git in ``folder``; its stripped output, or ``None`` when git fails."""
    completed = subprocess.run(
        ["git", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=_GIT_TIMEOUT_SECONDS,
        check=False,
    )
    if completed.returncode != 0:
        return None
    return completed.stdout.strip()
