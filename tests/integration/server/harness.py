"""Start ``plait serve`` and ``plait worker`` as real processes for protocol tests, or the
app in the test's own process (:func:`running_app`, :func:`client_of`).

Each cluster gets a specs folder of its own (copies of chosen specs and their
Python modules), a free port on 127.0.0.1 and the test database. Readiness is a
bounded poll of ``/readyz``; processes are always stopped, and their logs are
printed at teardown so pytest shows them when a test fails.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI

from plait.engine.store.migrator import migrate
from plait.engine.store.pool import Pool, open_pool
from plait.server.app import create_app
from plait.server.graphs import versions
from plait.server.settings import Settings
from tests.conftest import fresh_database

REPO = Path(__file__).resolve().parents[3]
SPECS = REPO / "specs"
#: The console script's code, run with this interpreter (the venv's `plait` is the same).
PLAIT = [sys.executable, "-m", "plait.server.cli.app"]
READY_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 15.0
_READY_POLL_SECONDS = 0.1


@asynccontextmanager
async def running_app(
    database_url: str, specs_dir: Path, **settings: Any
) -> AsyncIterator[FastAPI]:
    """The app on ``specs_dir`` with its lifespan running (pool, migrations, registry,
    listener and, unless ``workers=0``, a worker); ``settings`` are more of its Settings."""
    application = create_app(Settings(database_url=database_url, specs_dir=specs_dir, **settings))
    async with application.router.lifespan_context(application):
        yield application


def client_of(app: FastAPI, key: str | None = None) -> httpx.AsyncClient:
    """An HTTP client of ``app`` (sending ``key`` as ``x-api-key``), to use with ``async
    with``; a server error comes back as a response, not an exception."""
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    headers = {"x-api-key": key} if key is not None else None
    return httpx.AsyncClient(transport=transport, base_url="http://plait.test", headers=headers)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def prepare_specs(folder: Path, sources: Iterable[Path]) -> Path:
    """Copy spec files, Python modules and packages into ``folder`` (created)."""
    folder.mkdir(parents=True, exist_ok=True)
    for source in sources:
        target = folder / source.name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target)
    return folder


def child_env(database_url: str, specs_dir: Path) -> dict[str, str]:
    """Environment of a ``plait`` child: the test database, specs importable, no colour."""
    env = dict(os.environ)
    # The specs folder on PYTHONPATH: a worker imports the specs' `module:function`
    # refs even when it compiles a version read from the database.
    path = [str(specs_dir), str(REPO), env.get("PYTHONPATH", "")]
    env.update(
        {
            "PLAIT_DATABASE_URL": database_url,
            "PLAIT_SPECS_DIR": str(specs_dir),
            "PYTHONPATH": os.pathsep.join(p for p in path if p),
            "PYTHONUNBUFFERED": "1",
            "NO_COLOR": "1",
            "COLUMNS": "200",
        }
    )
    return env


@dataclass
class PlaitProcess:
    """One running ``plait`` process with its output in a log file."""

    name: str
    args: list[str]
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def pid(self) -> int:
        """The process id."""
        return self.process.pid

    def log(self, since: int = 0) -> str:
        """What the process printed (stdout and stderr), from byte offset ``since``."""
        with self.log_path.open("rb") as log:
            log.seek(since)
            return log.read().decode("utf-8", errors="replace")

    def log_size(self) -> int:
        """Bytes printed so far (an offset for :meth:`log`)."""
        return self.log_path.stat().st_size

    def kill(self) -> None:
        """SIGKILL: the process gets no chance to clean up."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=STOP_TIMEOUT_SECONDS)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it does not exit in time."""
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=STOP_TIMEOUT_SECONDS)


@dataclass
class Cluster:
    """A ``plait serve`` process (``url``) and any separate ``plait worker`` processes."""

    url: str
    specs_dir: Path
    log_dir: Path
    env: dict[str, str]
    processes: list[PlaitProcess] = field(default_factory=list)

    @property
    def workers(self) -> list[PlaitProcess]:
        """The separate worker processes."""
        return [p for p in self.processes if p.name.startswith("worker")]

    def start(self, name: str, *args: str, prefix: Sequence[str] = ()) -> PlaitProcess:
        """Start ``plait <args>`` with its output going to ``<log_dir>/<name>.log``.

        ``prefix`` runs it through another program (``ip netns exec <ns>``: another host).
        """
        log_path = self.log_dir / f"{name}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [*prefix, *PLAIT, *args],
                cwd=REPO,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        started = PlaitProcess(name, list(args), process, log_path)
        self.processes.append(started)
        return started

    def wait_ready(self, timeout: float = READY_TIMEOUT_SECONDS) -> None:
        """Poll ``/readyz`` until it answers 200; fail early if a process exits."""
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        with httpx.Client(base_url=self.url, timeout=2.0) as http:
            while time.monotonic() < deadline:
                for process in self.processes:
                    if process.process.poll() is not None:
                        raise RuntimeError(
                            f"{process.name} exited with {process.process.returncode} "
                            f"before the server was ready:\n{process.log()}"
                        )
                try:
                    response = http.get("/readyz")
                    if response.status_code == 200:
                        return
                    last = f"{response.status_code} {response.text}"
                except httpx.TransportError as exc:
                    last = repr(exc)
                # Readiness of another process has no event to await: a bounded poll.
                time.sleep(_READY_POLL_SECONDS)
        raise TimeoutError(f"{self.url}/readyz not ready after {timeout:g}s: {last}")

    def stop(self) -> None:
        """Stop every process (SIGTERM, then SIGKILL)."""
        for process in reversed(self.processes):
            process.stop()

    def log_sizes(self) -> dict[str, int]:
        """Every process's log size now: pass to :meth:`print_logs` to print only what follows."""
        return {process.name: process.log_size() for process in self.processes}

    def print_logs(self, since: Mapping[str, int] | None = None) -> None:
        """Print every process's log (pytest shows it for failed tests)."""
        for process in self.processes:
            offset = (since or {}).get(process.name, 0)
            print(f"----- {process.name} (pid {process.pid}): plait {' '.join(process.args)}")
            print(process.log(offset))


@contextmanager
def cluster(
    database_url: str,
    work_dir: Path,
    spec_sources: Iterable[Path],
    *,
    serve_args: Iterable[str] = (),
    workers: int = 0,
    worker_args: Iterable[str] = (),
    extra_env: Mapping[str, str] | None = None,
) -> Iterator[Cluster]:
    """``plait serve`` on a free port (plus ``workers`` ``plait worker`` processes), ready.

    ``extra_env`` is added to every process's environment. The processes are
    stopped on exit and their logs printed.
    """
    specs_dir = prepare_specs(work_dir / "specs", spec_sources)
    log_dir = work_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    running = Cluster(
        url=f"http://127.0.0.1:{port}",
        specs_dir=specs_dir,
        log_dir=log_dir,
        env={**child_env(database_url, specs_dir), **(extra_env or {})},
    )
    try:
        running.start(
            "serve",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--specs",
            str(specs_dir),
            *serve_args,
        )
        running.wait_ready()
        for index in range(workers):
            running.start(f"worker-{index + 1}", "worker", "--specs", str(specs_dir), *worker_args)
        yield running
    finally:
        running.stop()
        running.print_logs()


@contextmanager
def fresh_cluster(
    postgres_server_url: str,
    work_dir: Path,
    spec_sources: Iterable[Path],
    *,
    serve_args: Iterable[str] = (),
    workers: int = 0,
    worker_args: Iterable[str] = (),
    extra_env: Mapping[str, str] | None = None,
) -> Iterator[Cluster]:
    """:func:`cluster` (same arguments) on a fresh database of its own, dropped once the
    processes stop.

    For a server no other test's workers share: nothing else can claim its runs.
    """
    with (
        fresh_database(postgres_server_url) as url,
        cluster(
            url,
            work_dir,
            spec_sources,
            serve_args=serve_args,
            workers=workers,
            worker_args=worker_args,
            extra_env=extra_env,
        ) as running,
    ):
        yield running


@asynccontextmanager
async def registered_pool(database_url: str, specs_dir: Path) -> AsyncIterator[Pool]:
    """A migrated pool on ``database_url`` with ``specs_dir``'s specs registered (none in error).

    For in-process workers and claims on a database of their own.
    """
    async with await open_pool(database_url, max_size=20) as opened:
        await migrate(opened)
        issues = await versions.sync_folder(opened, specs_dir)
        # This module is not assert-rewritten: the message shows the issues.
        errors = [issue for issue in issues if issue.severity == "error"]
        assert errors == [], errors
        yield opened
