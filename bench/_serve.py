"""A real ``plait serve`` subprocess for the benchmarks that go over HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
READY_SECONDS = 60.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def plait_serve(
    specs: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``plait serve`` on a free port with ``specs`` (also on PYTHONPATH); yields (URL, process).

    ``args`` are extra ``plait serve`` options; the log goes beside ``specs``.
    """
    port = free_port()
    command = ["serve", "--host", "127.0.0.1", "--port", str(port), "--specs", str(specs), *args]
    environment = dict(env or os.environ, PYTHONPATH=f"{specs}{os.pathsep}{REPO}")
    log = specs.parent / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "server.cli.app", *command],
            cwd=REPO,
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base, process, log)
        yield base, process
    finally:
        process.terminate()
        process.wait(timeout=30)


def _wait_ready(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Poll ``/readyz`` (bounded) until the server answers 200."""
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"plait serve exited:\n{log.read_text()}")
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"plait serve not ready after {READY_SECONDS:g}s:\n{log.read_text()}")
