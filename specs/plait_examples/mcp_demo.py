"""A small MCP server for Plait's examples and tests (``spec.mcp_servers``).

Run it over stdio (``python -m plait_examples.mcp_demo``, from ``specs/``) or
streamable HTTP (``python -m plait_examples.mcp_demo --http 8765``; endpoint
``/mcp``). Its tools:

- ``create_ticket(title)``: a side effect; every call appends a line to the file
  ``MCP_DEMO_CALLS`` (when set) with the Plait idempotency key from ``_meta``;
- ``lookup_order(order_id)``: a read-only lookup;
- ``count_words(text, steps)``: reports progress ``steps`` times, then answers;
- ``big_report(rows)``: a large result (about 60 bytes per row);
- ``fail(status, message, retry_after)``: an ``is_error`` result carrying an HTTP-like
  status (and a ``retry_after``, when given);
- ``slow_report(seconds, topic)``: runs as a task (Tasks extension) when asked;
- ``whoami()``: the ``Authorization`` header it received (HTTP only);
- ``server_info()``: its process id, ``--label`` and ``MCP_DEMO_LABEL`` (per-run args/env).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

from plait.engine.tools.mcp.task_server import TasksServerExtension

#: The ``_meta`` key Plait puts a call's idempotency key under.
IDEMPOTENCY_META = "plait.dev/idempotency-key"
#: Environment variable naming the file ``create_ticket`` appends each call to.
CALLS_FILE_ENV = "MCP_DEMO_CALLS"
#: Environment variable ``server_info`` reports.
LABEL_ENV = "MCP_DEMO_LABEL"
#: The ``--label`` the process was started with.
_LABEL: str | None = None

ORDERS: dict[str, dict[str, Any]] = {
    "A-1001": {"customer": "ada@example.com", "total": 40.0, "status": "shipped"},
    "A-1002": {"customer": "grace@example.com", "total": 240.0, "status": "processing"},
}

tasks = TasksServerExtension(task_tools={"slow_report"})
server = MCPServer("plait-mcp-demo", extensions=[tasks])


def _idempotency_key(ctx: Context) -> str | None:
    value = (ctx.request_context.meta or {}).get(IDEMPOTENCY_META)
    return value if isinstance(value, str) else None


def _record(tool: str, **fields: Any) -> int:
    """Append this call to ``MCP_DEMO_CALLS`` (when set); return the tool's call count."""
    calls = os.environ.get(CALLS_FILE_ENV)
    if not calls:
        return 1
    with open(calls, "a", encoding="utf-8") as out:
        out.write(json.dumps({"tool": tool, **fields}) + "\n")
    with open(calls, encoding="utf-8") as lines:
        return sum(1 for line in lines if json.loads(line)["tool"] == tool)


@server.tool()
def create_ticket(title: str, ctx: Context) -> dict[str, Any]:
    """Open a support ticket titled ``title``; returns its id (not idempotent by itself)."""
    key = _idempotency_key(ctx)
    count = _record("create_ticket", title=title, key=key)
    return {"ticket": f"T-{count:04d}", "title": title, "idempotency_key": key}


@server.tool()
def lookup_order(order_id: str) -> dict[str, Any]:
    """The customer, total and status of order ``order_id``."""
    order = ORDERS.get(order_id)
    if order is None:
        raise ToolError(f"no order {order_id!r}")
    return {"order_id": order_id, **order}


@server.tool()
async def count_words(text: str, ctx: Context, steps: int = 3) -> dict[str, int]:
    """Count the words of ``text``, reporting progress ``steps`` times on the way."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
        await asyncio.sleep(0.01)
    return {"words": len(text.split())}


@server.tool()
def big_report(rows: int = 2000) -> dict[str, Any]:
    """A report of ``rows`` rows: big enough to be stored by reference."""
    return {
        "rows": [
            {"row": i, "label": f"item-{i:06d}", "value": (i * 7919) % 1000} for i in range(rows)
        ]
    }


@server.tool()
def fail(
    message: str = "the service is unavailable", status: int = 503, retry_after: float = 0
) -> CallToolResult:
    """Always fails: an ``is_error`` result whose ``status`` says what kind of failure it was
    (and, with ``retry_after``, when to come back, as an HTTP ``Retry-After`` would)."""
    _record("fail", status=status)
    details: dict[str, Any] = {"status": status, "message": message}
    if retry_after:
        details["retry_after"] = retry_after
    return CallToolResult(
        content=[TextContent(text=message)], structured_content=details, is_error=True
    )


@server.tool()
async def slow_report(topic: str, seconds: float = 1.0, fail: bool = False) -> Any:
    """A report on ``topic`` that takes ``seconds``; runs as a task (Tasks extension).

    With ``fail``, the report fails after ``seconds`` (an ``is_error`` result, status 503).
    """
    await asyncio.sleep(seconds)
    if fail:
        message = f"no report on {topic}"
        return CallToolResult(
            content=[TextContent(text=message)],
            structured_content={"status": 503, "message": message},
            is_error=True,
        )
    return {"topic": topic, "report": f"All quiet on {topic}.", "seconds": seconds}


@server.tool()
def whoami(ctx: Context) -> dict[str, Any]:
    """The ``Authorization`` header of this request (``None`` over stdio)."""
    headers = ctx.headers or {}
    return {"authorization": headers.get("authorization")}


@server.tool()
def server_info() -> dict[str, Any]:
    """This process: its id, the ``--label`` it was started with and ``MCP_DEMO_LABEL``."""
    return {"pid": os.getpid(), "label": _LABEL, "env_label": os.environ.get(LABEL_ENV)}


def main() -> None:
    """Serve over stdio, or streamable HTTP with ``--http PORT``."""
    global _LABEL
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--label", help="a label server_info reports (any text)")
    options = parser.parse_args()
    _LABEL = options.label
    if options.http is None:
        server.run()
    else:
        server.run("streamable-http", host=options.host, port=options.http)


if __name__ == "__main__":
    main()
