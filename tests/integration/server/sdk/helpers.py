"""Small helpers shared by the protocol tests."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from langgraph_sdk.schema import StreamPart


async def collect(stream: AsyncIterator[StreamPart]) -> list[StreamPart]:
    """Every part of a stream, to its end."""
    return [part async for part in stream]


def blocking_input(folder: Path, name: str = "run") -> dict[str, str]:
    """Input of ``sdk-blocking``: a side-effect log and a release file that does not exist yet."""
    return {"log": str(folder / f"{name}.log"), "release": str(folder / f"{name}.release")}


def log_lines(run_input: dict[str, str]) -> list[str]:
    """The side effects recorded so far by a run of ``sdk-blocking`` / ``sdk-tool-once``."""
    path = Path(run_input["log"])
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def is_waiting(part: StreamPart) -> bool:
    """The ``custom`` event ``wait_for_release`` sends when it starts blocking."""
    return part.event == "custom" and isinstance(part.data, dict) and part.data.get("waiting")


def seq_of(event_id: str | None) -> int:
    """The journal sequence number in an SSE ``id:`` (its trailing integer)."""
    assert event_id, "an event of a resumable stream has no id"
    found = re.search(r"(\d+)$", event_id)
    assert found, f"event id {event_id!r} does not end with a sequence number"
    return int(found.group(1))


def assert_contiguous(ids: list[str | None]) -> None:
    """The ids go up by exactly one each: nothing lost, nothing repeated."""
    seqs = [seq_of(i) for i in ids]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs


def events_named(parts: list[StreamPart], name: str) -> list[Any]:
    """The data of every part called ``name``."""
    return [part.data for part in parts if part.event == name]


def release(run_input: dict[str, str]) -> None:
    """Let a blocked ``wait_for_release`` node finish (it polls for this file)."""
    touch(Path(run_input["release"]))


def touch(path: Path) -> None:
    """Create ``path`` (sync on purpose: a tiny local write, no need for a thread)."""
    path.touch()
