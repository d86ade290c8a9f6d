"""Run ``plait`` as a subprocess against the session's test database."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
SPECS = REPO / "specs"
TEST_SPECS = Path(__file__).resolve().parent / "specs"
#: The console script's code, run with this interpreter (the venv's `plait` is the same).
PLAIT = [sys.executable, "-m", "plait.server.cli.app"]
TIMEOUT_SECONDS = 120


@dataclass(frozen=True)
class Result:
    """A finished ``plait`` process."""

    code: int
    stdout: str
    stderr: str

    def events(self) -> list[dict[str, Any]]:
        """The JSON lines of ``--json`` output."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def plait_env(database_url: str) -> dict[str, str]:
    """The environment of a ``plait`` child: the test database, no colours, wide lines."""
    env = dict(os.environ)
    env.update(
        {
            "PLAIT_DATABASE_URL": database_url,
            "NO_COLOR": "1",
            "COLUMNS": "200",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


PlaitRunner = Callable[..., Result]


def run_plait(env: dict[str, str], *args: str | Path) -> Result:
    """Run ``plait *args`` to completion with ``env`` and stdin not a terminal."""
    completed = subprocess.run(
        [*PLAIT, *map(str, args)],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    return Result(completed.returncode, completed.stdout, completed.stderr)


@pytest.fixture
def plait(database_url: str) -> PlaitRunner:
    """``plait(*args, env=None)``: run the CLI to completion with stdin not a terminal."""

    def run(*args: str | Path, env: dict[str, str] | None = None) -> Result:
        return run_plait(env or plait_env(database_url), *args)

    return run


@pytest.fixture
def replay_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    """The CLI's environment for record and replay tests: with the file the tools of
    their specs (``specs/replay*/*_steps.py``) note each call in."""
    return {**plait_env(database_url), "REPLAY_CALLS": str(tmp_path / "calls.jsonl")}


def copied_spec(tmp_path: Path, folder: str, name: str) -> Path:
    """Spec ``name`` of ``TEST_SPECS/folder``, in a copy of that folder of the test's own."""
    shutil.copytree(TEST_SPECS / folder, tmp_path / "specs")
    return tmp_path / "specs" / name


def started_thread(plait: PlaitRunner, *args: str | Path, env: dict[str, str] | None = None) -> str:
    """Run ``plait run *args``, which must succeed; the thread it started."""
    ran = plait("run", *args, env=env)
    assert ran.code == 0, ran.stdout + ran.stderr
    found = re.search(r"started on thread ([0-9a-f-]{36})", ran.stdout)
    assert found, ran.stdout
    return found.group(1)


def command_args(command: str) -> Sequence[str]:
    """The arguments of a printed ``plait ...`` command (without the program name)."""
    import shlex

    words = shlex.split(command)
    assert words[:2] == ["plait", "run"], command
    return words[1:]
