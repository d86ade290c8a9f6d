"""Python nodes and tools of the protocol-test specs.

Side effects go to a log file named in the input, so a test can count how
often each step really ran; ``wait_for_release`` blocks until a file appears
and reports the process that runs it, so a test knows which worker to kill.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from langgraph.config import get_stream_writer

_POLL_SECONDS = 0.05


def shout(text: str) -> str:
    """Emit a ``custom`` stream event, then return ``text`` upper-cased."""
    get_stream_writer()({"shouting": text})
    return text.upper()


def record(log: str, step: str) -> str:
    """Append ``step`` to the log; the result is the step's name."""
    with Path(log).open("a", encoding="utf-8") as out:
        out.write(step + "\n")
    return step


def charge(log: str, note: str) -> dict[str, Any]:
    """A tool with a side effect: one line in the log per real execution."""
    record(log, f"charge:{note}")
    return {"charged": note}


async def wait_for_release(log: str, release: str) -> str:
    """Say which process runs this (``custom`` event), then wait for the ``release`` file."""
    get_stream_writer()({"waiting": True, "pid": os.getpid()})
    record(log, "wait-started")
    # The file comes from the test process, so there is no event to await: poll it.
    while not await asyncio.to_thread(Path(release).exists):  # noqa: ASYNC110
        await asyncio.sleep(_POLL_SECONDS)
    return record(log, "wait-finished")


#: Agent tools get their arguments from the (scripted) model, so the test's
#: side-effect log reaches them through the worker's environment instead.
SIDE_EFFECTS_ENV = "PLAIT_TEST_SIDE_EFFECTS"


def charge_order(note: str) -> dict[str, Any]:
    """Agent tool with a side effect: one ``charge:<note>`` line per real execution."""
    return charge(os.environ[SIDE_EFFECTS_ENV], note)


async def hold() -> str:
    """Agent tool that blocks until ``<log>.release`` exists (reporting its process first)."""
    log = os.environ[SIDE_EFFECTS_ENV]
    return await wait_for_release(log, log + ".release")
