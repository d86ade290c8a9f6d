"""Third-party MCP servers over stdio: mcp-server-time and mcp-server-git."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from plait.engine.errors import ToolReportedError
from plait.engine.governance.retries import classify
from plait.engine.tools.mcp.schema_check import ToolArgumentsInvalid
from tests.integration.mcp.conftest import DEMO_STDIO, TIME_STDIO, load_tool

TIME = {"time": TIME_STDIO}


async def test_time_server_lists_its_tools_with_their_schemas() -> None:
    tool = load_tool("now", {"server": "time", "tool": "get_current_time"}, TIME)
    assert tool.name == "now"
    assert "timezone" in tool.args
    assert "time" in tool.description.lower()


async def test_time_server_answers_a_call() -> None:
    tool = load_tool("now", {"server": "time", "tool": "get_current_time", "timeout": 10}, TIME)
    value = await tool.ainvoke({"timezone": "Europe/Paris"})
    assert value["timezone"] == "Europe/Paris"
    assert value["datetime"].startswith("20")


async def test_arguments_that_break_the_schema_are_refused_before_the_call() -> None:
    tool = load_tool("convert", {"server": "time", "tool": "convert_time"}, TIME)
    with pytest.raises(ToolArgumentsInvalid, match=r"MCP tool .convert.") as raised:
        await tool.ainvoke({"source_timezone": "UTC", "time": 1200})
    assert "target_timezone" in str(raised.value)  # the missing argument is named
    assert classify(raised.value) == "validation"  # so never retried


async def test_a_tool_error_result_becomes_a_typed_error() -> None:
    tool = load_tool("now", {"server": "time", "tool": "get_current_time"}, TIME)
    with pytest.raises(ToolReportedError, match="Mars/Olympus") as raised:
        await tool.ainvoke({"timezone": "Mars/Olympus"})
    assert raised.value.tool == "now"
    assert classify(raised.value) == "other"  # no status: not retried


async def test_the_per_call_timeout_applies() -> None:
    tool = load_tool(
        "slow", {"server": "demo", "tool": "slow_report", "timeout": 0.3}, {"demo": DEMO_STDIO}
    )
    with pytest.raises(TimeoutError, match=r"timed out after 0\.3s") as raised:
        await tool.ainvoke({"topic": "x", "seconds": 5})
    assert classify(raised.value) == "timeout"
    # The session survives a timed-out call.
    fast = await tool.ainvoke({"topic": "y", "seconds": 0})
    assert fast["topic"] == "y"


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "test@example.com")
    git("config", "user.name", "Test")
    (folder / "README.md").write_text("hello\n")
    git("add", "README.md")
    git("commit", "-q", "-m", "First commit")
    (folder / "README.md").write_text("hello again\n")
    return folder


async def test_git_server_reports_status_and_log(repository: Path) -> None:
    git = {
        "git": {
            "transport": "stdio",
            "command": str(Path(sys.executable).parent / "mcp-server-git"),
            "args": ["--repository", str(repository)],
        }
    }
    status = load_tool("status", {"server": "git", "tool": "git_status"}, git)
    log = load_tool("log", {"server": "git", "tool": "git_log"}, git)
    assert "README.md" in str(await status.ainvoke({"repo_path": str(repository)}))
    assert "First commit" in str(await log.ainvoke({"repo_path": str(repository)}))


def _child_with_env(marker: str) -> int:
    """The one child process of this test process whose environment holds ``marker``."""
    listed = subprocess.run(
        ["pgrep", "-P", str(os.getpid())], capture_output=True, text=True, check=False
    )
    ours = []
    for pid in listed.stdout.split():
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except FileNotFoundError:
            continue  # a child that exited since pgrep listed it
        if marker.encode() in environ.split(b"\0"):
            ours.append(int(pid))
    assert len(ours) == 1, listed.stdout
    return ours[0]


async def test_a_crashed_server_is_a_network_error_then_reconnected() -> None:
    # An env of its own: a session no other test shares.
    demo = {"demo": {**DEMO_STDIO, "env": {"PLAIT_TEST_SESSION": "crash"}}}
    tool = load_tool("lookup", {"server": "demo", "tool": "lookup_order", "timeout": 10}, demo)
    assert (await tool.ainvoke({"order_id": "A-1001"}))["status"] == "shipped"
    pid = await asyncio.to_thread(_child_with_env, "PLAIT_TEST_SESSION=crash")
    os.kill(pid, signal.SIGKILL)

    with pytest.raises(ConnectionError) as raised:
        for _ in range(100):  # until the transport has noticed the death
            await tool.ainvoke({"order_id": "A-1001"})
            await asyncio.sleep(0.05)
    assert classify(raised.value) == "network"
    assert (await tool.ainvoke({"order_id": "A-1002"}))["status"] == "processing"
