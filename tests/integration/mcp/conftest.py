"""MCP peers for the tests: real servers over real transports.

- ``mcp-server-time`` and ``mcp-server-git`` (third-party, stdio);
- the repository's demo server ``specs/plait_examples/mcp_demo.py`` over stdio,
  and over streamable HTTP in a subprocess on a free port of 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool

from plait.engine.governance.secrets import ENVIRONMENT
from plait.engine.spec.models import McpServerDef, ToolDef
from plait.engine.tools.mcp.hub import Credentials
from plait.engine.tools.python_tools import load_python_tool
from tests.conftest import fresh_database
from tests.integration.server.harness import Cluster, cluster

REPO = Path(__file__).resolve().parents[3]
SPECS = REPO / "specs"
READY_SECONDS = 30.0

DEMO_STDIO = {"transport": "stdio", "command": "python", "args": ["-m", "plait_examples.mcp_demo"]}
TIME_STDIO = {
    "transport": "stdio",
    "command": str(Path(sys.executable).parent / "mcp-server-time"),
    "args": ["--local-timezone", "UTC"],
}


#: What a server without secrets is reached with outside a run.
NO_SECRETS = Credentials("environment", {})


def load_tool(
    name: str, tool: Mapping[str, Any], servers: Mapping[str, Mapping[str, Any]]
) -> BaseTool:
    """A ``kind: mcp`` tool as the compiler loads it (specs/ is the spec folder), with
    the server's secrets from the environment, as ``plait run`` reads them."""
    definitions = {key: McpServerDef.model_validate(value) for key, value in servers.items()}
    tool_def = ToolDef.model_validate({"kind": "mcp", **tool})
    assert tool_def.server is not None
    server = definitions[tool_def.server]
    names = [*server.headers.values(), *server.secrets]
    values = ENVIRONMENT.read_now(names)
    return load_python_tool(
        name, tool_def, SPECS, definitions, Credentials(ENVIRONMENT.scope, values)
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class DemoServer:
    """The demo server over streamable HTTP, and the file its ``create_ticket`` appends to."""

    url: str
    calls: Path
    process: subprocess.Popen[bytes]

    def calls_of(self, tool: str) -> list[dict[str, Any]]:
        """The calls of ``tool`` the server received (the tools that record theirs)."""
        lines = self.calls.read_text().splitlines() if self.calls.exists() else []
        return [call for call in map(json.loads, lines) if call["tool"] == tool]


@contextlib.contextmanager
def listening(
    command: list[str], port: int, log_path: Path, **popen: Any
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``command`` (a server of another process) until it listens on ``port`` of
    127.0.0.1; stop it on exit. Its output goes to ``log_path``, shown if it dies first."""
    log = log_path.open("ab")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, **popen)
    deadline = time.monotonic() + READY_SECONDS
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(log_path.read_text())
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)  # another process's readiness: a bounded poll
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()  # never leave a server behind
            process.wait()
        log.close()


@contextlib.contextmanager
def serving_spec(
    postgres_server_url: str, tmp_path: Path, name: str, text: str
) -> Iterator[tuple[Cluster, str]]:
    """``plait serve`` (its worker inside) on a fresh database, serving the spec ``text``
    (written as ``name``.yaml); the cluster and the database's URL."""
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(text)
    with (
        fresh_database(postgres_server_url) as url,
        cluster(url, tmp_path / "cluster", [spec]) as running,
    ):
        yield running, url


@contextlib.contextmanager
def serve_demo_http(folder: Path, port: int) -> Iterator[DemoServer]:
    """``python -m plait_examples.mcp_demo --http PORT`` (a real uvicorn server), until exit."""
    calls = folder / "calls.jsonl"
    env = {**os.environ, "MCP_DEMO_CALLS": str(calls), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "plait_examples.mcp_demo", "--http", str(port)]
    with listening(command, port, folder / "server.log", cwd=SPECS, env=env) as process:
        yield DemoServer(f"http://127.0.0.1:{port}/mcp", calls, process)


@pytest.fixture(scope="module")
def demo_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    """The demo server over streamable HTTP, shared by a module's tests."""
    with serve_demo_http(tmp_path_factory.mktemp("mcp-demo"), free_port()) as server:
        yield server
