"""A third-party server half of the MCP Tasks extension (2026-07-28): FastMCP, fastmcp-tasks.

For Plait's tests. Its task tools:

- ``deploy(service, seconds)``: asks a person first (``input_required``, an
  ``elicitation/create`` form ``{go: boolean, note: string}``), then works for
  ``seconds`` and answers ``deployed <service>: <note>``, or ``not deployed:
  <service>`` when declined;
- ``count(n)``: works a moment and answers ``counted <n>``.

Serves stdio, or streamable HTTP with ``--http PORT`` (endpoint ``/mcp``).
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import timedelta
from typing import Any

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

server = FastMCP("deploys")
server.add_extension(TasksExtension())

#: Task tools, polled often (the default asks clients to wait 5 s between polls).
TASK = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=200))

_QUESTION = {
    "type": "object",
    "properties": {
        "go": {"type": "boolean", "description": "Deploy now"},
        "note": {"type": "string", "description": "A note for the log"},
    },
    "required": ["go"],
}


def _field(answer: Any, name: str) -> Any:
    content = answer.content if hasattr(answer, "content") else (answer or {}).get("content")
    return (content or {}).get(name)


def _action(answer: Any) -> Any:
    return answer.action if hasattr(answer, "action") else (answer or {}).get("action")


@server.tool(task=TASK)
async def deploy(service: str, ctx: Context, seconds: float = 1.0) -> Any:
    """Deploy ``service`` once a person says so."""
    answer = (ctx.input_responses or {}).get("confirm")
    if answer is None:
        question = mcp_types.ElicitRequestFormParams(
            message=f"Deploy {service} to production?", requested_schema=_QUESTION
        )
        return mcp_types.InputRequiredResult(
            input_requests={"confirm": mcp_types.ElicitRequest(params=question)}
        )
    if _action(answer) != "accept" or not _field(answer, "go"):
        return f"not deployed: {service}"
    await asyncio.sleep(seconds)
    return f"deployed {service}: {_field(answer, 'note') or ''}"


@server.tool(task=TASK)
async def count(n: int) -> str:
    """Count to ``n``, slowly."""
    await asyncio.sleep(0.3)
    return f"counted {n}"


def main() -> None:
    """Serve over stdio, or streamable HTTP with ``--http PORT``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT")
    options = parser.parse_args()
    if options.http is None:
        server.run(show_banner=False)
    else:
        server.run(transport="http", host="127.0.0.1", port=options.http, show_banner=False)


if __name__ == "__main__":
    main()
