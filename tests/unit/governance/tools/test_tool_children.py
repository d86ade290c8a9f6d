"""A tool call's processes end with the call when it times out, on asyncio's loop and uvloop.

The tools start ``sleep`` and wait for it with no ``finally``; their timeout
fires; the processes must be gone once the run has failed, while a process
nobody's call owns (as the MCP hub's stdio servers) stays.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvloop

from plait.engine.errors import NodeError
from plait.engine.tools import children
from tests.polling import until
from tests.processes import kill_noted, noted_pids, running
from tests.unit.governance.tools.helpers import Run, make_spec

FNS = "plait_children_fns"


@pytest.fixture
def pids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The folder the tools note their pids in; every noted process is killed afterwards."""
    monkeypatch.setenv("PLAIT_TEST_PIDS", str(tmp_path))
    yield tmp_path
    kill_noted(tmp_path)


def _spec(function: str, timeout: str = "500ms") -> Any:
    return make_spec(
        {
            "state": {"out": {}},
            "tools": {"slow": {"function": f"{FNS}:{function}", "timeout": timeout}},
            "nodes": {
                "call": {"kind": "tool", "tool": "slow", "args": {"name": "'p'"}, "output": "out"}
            },
            "edges": [{"from": "START", "to": "call"}, {"from": "call", "to": "END"}],
        }
    )


async def _noted(folder: Path, name: str = "p") -> list[int]:
    async def found() -> list[int]:
        return noted_pids(folder / name)

    return list(await until(found, f"the tool to note its pids in {name}"))


async def _gone(pid: int) -> None:
    async def ended() -> bool:
        return not running(pid)

    await until(ended, f"process {pid} to end")


async def _timed_out(function: str, folder: Path) -> list[int]:
    """Run a spec whose tool times out; return the pids it started (all still running then)."""
    run = Run(_spec(function))
    with pytest.raises(NodeError, match=r"timed out after 0\.5s"):
        await run.start({})
    return await _noted(folder)


LOOPS: dict[str, Callable[[Coroutine[Any, Any, None]], None]] = {
    "asyncio": asyncio.run,
    "uvloop": uvloop.run,
}


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("function", ["sleep_async", "sleep_sync", "sleep_in_shell"])
def test_a_timed_out_calls_processes_are_ended(pids: Path, loop: str, function: str) -> None:
    async def scenario() -> None:
        started = await _timed_out(function, pids)
        assert started, "the tool started its process"
        for pid in started:
            await _gone(pid)

    LOOPS[loop](scenario())


async def test_a_call_that_returned_leaves_its_processes_until_the_worker_stops(
    pids: Path,
) -> None:
    run = Run(_spec("start_and_return"))
    state = await run.start({})
    assert state["out"] == "started"
    (pid,) = await _noted(pids)
    assert running(pid)
    assert pid in {p.pid for p in children.left_running()}

    await children.stop_all()

    await _gone(pid)
    assert children.left_running() == []


async def test_a_timed_out_calls_thread_may_not_start_processes(
    pids: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLAIT_TEST_OUTLIVE", "1.0")
    run = Run(_spec("start_after_timeout"))
    with pytest.raises(NodeError, match="timed out"):
        await run.start({})

    async def refused() -> str:
        path = pids / "p"
        return path.read_text() if path.exists() else ""

    text = await until(refused, "the tool's thread to try to start a process")
    assert text.startswith("refused: tool call slow in call has ended"), text


async def test_a_process_no_call_owns_survives_a_timed_out_call(pids: Path) -> None:
    """What the MCP hub does for its stdio servers: they start in a context no call owns."""
    bystander: list[subprocess.Popen[bytes]] = []

    def start_unowned() -> None:
        bystander.append(subprocess.Popen(["sleep", "987654"]))

    with pytest.raises(TimeoutError), children.owned_by("outer"):
        children.unowned_context().run(start_unowned)
        await asyncio.wait_for(asyncio.Event().wait(), 0.05)
    try:
        (process,) = bystander
        await asyncio.sleep(0)  # nothing was signalled: still running now
        assert running(process.pid)
    finally:
        bystander[0].kill()
        bystander[0].wait()
