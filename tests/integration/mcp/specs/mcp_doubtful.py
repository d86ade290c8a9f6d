"""A stdio MCP server whose ``create_ticket`` can be caught between its effect and its answer.

``python mcp_doubtful.py --calls FILE --release FILE``: each call appends
``{"title", "key"}`` (``key``: Plait's idempotency key from ``_meta``) to the
calls file; while the release file does not exist, the call then reports
progress ("created") and waits, so a test can kill the client there. The
module also holds ``ticket_of``, the tool's ``reconcile`` (run by Plait, not
by the server): it reads the calls file named by ``PLAIT_TEST_MCP_CALLS``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

IDEMPOTENCY_META = "plait.dev/idempotency-key"
server = MCPServer("doubtful")
options = argparse.Namespace(calls=None, release=None)


def _calls(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return [json.loads(line) for line in text.splitlines()]


def _record(title: str, key: str | None) -> str:
    calls = Path(options.calls)
    with calls.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"title": title, "key": key}) + "\n")
    return f"T-{len(_calls(calls)):04d}"


@server.tool()
async def create_ticket(title: str, ctx: Context) -> dict[str, Any]:
    """Open a ticket titled ``title`` (a side effect; not idempotent by itself)."""
    key = (ctx.request_context.meta or {}).get(IDEMPOTENCY_META)
    ticket = await asyncio.to_thread(_record, title, key)
    released = Path(options.release).exists
    if not await asyncio.to_thread(released):
        await ctx.report_progress(1, 1, "created")
        while not await asyncio.to_thread(released):  # noqa: ASYNC110 - another process's file
            await asyncio.sleep(0.05)
    return {"ticket": ticket, "title": title}


def ticket_of(args: dict[str, Any], key: str) -> dict[str, Any]:
    """Reconcile: the ticket of the call with idempotency key ``key``, if the server opened it."""
    for index, call in enumerate(_calls(Path(os.environ["PLAIT_TEST_MCP_CALLS"])), start=1):
        if call["key"] == key:
            return {
                "happened": True,
                "result": {"ticket": f"T-{index:04d}", "title": args["title"]},
            }
    return {"happened": False}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", required=True)
    parser.add_argument("--release", required=True)
    parser.parse_args(namespace=options)
    server.run()
