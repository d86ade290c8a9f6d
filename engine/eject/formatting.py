"""``ruff format`` over generated source, when ruff is installed; the source as it is if not."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys


def formatted(source: str, *, line_length: int = 100) -> str:
    """``source`` formatted by ruff (its ``format`` command); unchanged without ruff."""
    command = _ruff()
    if command is None:
        return source
    result = subprocess.run(
        [*command, "format", f"--line-length={line_length}", "--stdin-filename=ejected.py", "-"],
        input=source,
        capture_output=True,
        text=True,
        check=False,
    )
    # A failure to format is no reason to lose the module: it is valid Python either way.
    return result.stdout if result.returncode == 0 and result.stdout else source


def _ruff() -> list[str] | None:
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    found = shutil.which("ruff")
    return [found] if found is not None else None
