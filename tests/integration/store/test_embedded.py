"""The embedded server across separate `plait` processes: data stays, the server stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from plait.engine.store.database import embedded_server, release_embedded

pytestmark = pytest.mark.postgres

# Each child stands for one CLI invocation: it resolves the URL like Plait does,
# writes or reads a row, and optionally dies by SIGKILL (a killed run).
_CHILD = """
import os, signal, sys
import psycopg
from plait.engine.store.database import database_url

with psycopg.connect(database_url(), autocommit=True) as conn:
    if sys.argv[1] == "write":
        conn.execute("CREATE TABLE IF NOT EXISTS visits (n int)")
        conn.execute("INSERT INTO visits VALUES (1)")
    print(conn.execute("SELECT count(*) FROM visits").fetchone()[0])
if sys.argv[2] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _invoke(home: Path, action: str, ending: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PLAIT_DATABASE_URL"}
    env["PLAIT_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-c", _CHILD, action, ending],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_embedded_server_keeps_data_and_stops_after_last_process(tmp_path: Path) -> None:
    postmaster = tmp_path / "pgdata" / "postmaster.pid"

    first = _invoke(tmp_path, "write", "exit")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "1"
    assert not postmaster.exists(), "the server should stop when its only user exits"

    killed = _invoke(tmp_path, "write", "kill")
    assert killed.returncode == -signal.SIGKILL
    assert killed.stdout.strip() == "2"
    assert postmaster.exists(), "a killed process cannot stop the server"

    # The next invocation joins the running server, forgets the dead holder,
    # and, being the last user, stops the server when it exits.
    last = _invoke(tmp_path, "read", "exit")
    assert last.returncode == 0, last.stderr
    assert last.stdout.strip() == "2"
    assert not postmaster.exists()


def test_plait_serve_stops_the_embedded_server_on_sigterm(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PLAIT_DATABASE_URL"}
    env["PLAIT_HOME"] = str(tmp_path)
    specs = tmp_path / "specs"
    specs.mkdir()
    serve = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "plait.server.cli.app",
            "serve",
            "--port",
            "0",
            "--specs",
            str(specs),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stderr is not None
        # uvicorn logs this line once the lifespan (and so the database) is up.
        for line in serve.stderr:
            if "Application startup complete" in line:
                break
        postmaster = tmp_path / "pgdata" / "postmaster.pid"
        assert postmaster.exists()
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=60)
    finally:
        if serve.poll() is None:
            serve.kill()
    assert not postmaster.exists(), "plait serve was the last user: the server should stop"


def test_releasing_plaits_own_server_leaves_a_callers_running(tmp_path: Path) -> None:
    """An app given a URL ends its lifespan with release_embedded(): a test session's own
    embedded server (started with embedded_server) must keep running, or every test after
    the first app finds no database (./dev test without PLAIT_DATABASE_URL did)."""
    server = embedded_server(tmp_path / "pgdata")
    try:
        release_embedded()
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        server.cleanup()
    assert not (tmp_path / "pgdata" / "postmaster.pid").exists(), "its caller stops it"
