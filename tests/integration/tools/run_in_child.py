"""Run a spec on a thread with the engine's runner and print its events as JSON lines.

Tests start this in a child process to kill it mid-run (``python -m
tests.integration.tools.run_in_child SPEC THREAD INPUT_JSON``). It uses the
engine alone, as any executor of runs would: no CLI, no server.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from plait.engine.compiler import compile_spec
from plait.engine.run.runner import run_graph
from plait.engine.spec.loader import load_spec
from plait.engine.store.database import database_url
from plait.engine.store.pool import open_pool


async def main(spec: Path, thread: str, payload: dict[str, object]) -> None:
    """Run ``spec`` on ``thread`` with ``payload`` as input, printing every event."""
    compiled = compile_spec(load_spec(spec))
    async with await open_pool(database_url()) as pool:
        async for event in run_graph(compiled, pool, thread, input=payload):
            print(json.dumps(event.to_dict(), default=str), flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])))
