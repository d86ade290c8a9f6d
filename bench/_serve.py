"""Server subprocesses for the benchmarks that go over HTTP: ``plait serve``, and the
bare baseline of ``bare_server.py``."""

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

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
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
    command = ["plait.server.cli.app", "serve", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--specs", str(specs), *args]
    log = specs.parent / "serve.log"
    with _serving("plait serve", command, port, [specs, REPO], env, log) as served:
        yield served


@contextmanager
def bare_serve(
    logs: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The bare baseline server (``bare_server.py``) on a free port; yields (URL, process).

    No access log: the baseline does the least a server can. Its log goes into ``logs``.
    """
    port = free_port()
    command = ["uvicorn", "bare_server:app", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--no-access-log", "--log-level", "warning"]
    log = logs / "bare.log"
    with _serving("the bare server", command, port, [BENCH, REPO], env, log) as served:
        yield served


@contextmanager
def _serving(
    name: str,
    module_args: list[str],
    port: int,
    path: list[Path],
    env: dict[str, str] | None,
    log: Path,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``python -m <module_args>`` with ``path`` as PYTHONPATH, until it answers ``/readyz``."""
    environment = dict(env or os.environ, PYTHONPATH=os.pathsep.join(map(str, path)))
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", *module_args],
            cwd=REPO,
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(name, base, process, log)
        yield base, process
    except BaseException:
        # The server's side of a failed batch, before its log goes with the temp dir.
        tail = log.read_text(errors="replace").splitlines()[-40:]
        print(f"--- last lines of {name}'s log ---", *tail, sep="\n", file=sys.stderr)
        raise
    finally:
        process.terminate()
        process.wait(timeout=30)


def _wait_ready(name: str, base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Poll ``/readyz`` (bounded) until the server answers 200."""
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{name} exited:\n{log.read_text()}")
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{name} not ready after {READY_SECONDS:g}s:\n{log.read_text()}")
