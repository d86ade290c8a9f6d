"""MCP tools in a compiled graph on Postgres: events, idempotency keys, large results."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import pytest

from plait.engine.compiler import compile_spec
from plait.engine.run.events import Completed, Custom, RunEvent
from plait.engine.run.runner import new_thread_id, run_graph
from plait.engine.spec.loader import load_spec
from plait.engine.store.pool import Pool
from plait.engine.tools.mcp.results import is_reference, load_reference

SPEC = Path(__file__).resolve().parent / "specs" / "mcp-calls.yaml"


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the demo server (a child of this process) appends its calls to."""
    path = tmp_path / "calls.jsonl"
    monkeypatch.setenv("MCP_DEMO_CALLS", str(path))
    return path


async def run(pool: Pool, text: str) -> list[RunEvent]:
    compiled = compile_spec(load_spec(SPEC))
    async with contextlib.aclosing(
        run_graph(compiled, pool, new_thread_id(), input={"text": text})
    ) as events:
        return [event async for event in events]


async def test_progress_large_results_and_idempotency_keys(pool: Pool, calls: Path) -> None:
    events = await run(pool, "three little words")
    completed = events[-1]
    assert isinstance(completed, Completed), completed
    custom = [e.data for e in events if isinstance(e, Custom)]

    progress = [e for e in custom if e.get("plait") == "tool_progress"]
    assert [(p["progress"], p["total"]) for p in progress] == [(1, 3), (2, 3), (3, 3)]
    assert {p["node"] for p in progress} == {"count"}
    assert progress[0]["message"] == "step 1 of 3"
    assert completed.output["counted"] == {"words": 3}

    report = completed.output["report"]
    assert is_reference(report)  # 500 rows are over the server's 4096-byte inline_limit
    assert report["size"] > 4096 and report["$ref"].startswith("plait-blob:sha256:")
    rows = (await load_reference(pool, report))["rows"]
    assert len(rows) == 500 and rows[499] == {
        "row": 499,
        "label": "item-000499",
        "value": 499 * 7919 % 1000,
    }

    # The gateway's idempotency key reached the server in `_meta`.
    lines = (await asyncio.to_thread(calls.read_text)).splitlines()
    (ticket,) = [json.loads(line) for line in lines]
    key = completed.output["ticket"]["idempotency_key"]
    assert ticket == {"tool": "create_ticket", "title": "three little words", "key": key}
    assert len(key) == 64
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT tool, result FROM plait_tool_results WHERE key = %s", (key,)
        )
        row = await cursor.fetchone()
    assert row is not None and row["tool"] == "create_ticket"
    assert row["result"]["ticket"] == completed.output["ticket"]["ticket"]
