"""MCP tools: sessions, the tool that calls them, the Tasks extension, large results.

See docs/mcp.md. Every MCP call goes through ``plait.engine.tools.gateway.call_tool``
like any tool, so allowlists, risk, retries, breakers, idempotency records and
the audit trail apply unchanged.

The surface loads on first use (``plait.engine.surfaces``): the run context
imports ``parking`` for every run, and only MCP specs should load the SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.engine.surfaces import on_first_use

if TYPE_CHECKING:
    from plait.engine.tools.mcp.hub import ServerConnection, credentials_of, on_hub
    from plait.engine.tools.mcp.task_protocol import TERMINAL
    from plait.engine.tools.mcp.tasks import cancel_task, get_task

__all__ = ["TERMINAL", "ServerConnection", "cancel_task", "credentials_of", "get_task", "on_hub"]

if not TYPE_CHECKING:
    __getattr__ = on_first_use(
        __name__,
        {
            "hub": ("ServerConnection", "credentials_of", "on_hub"),
            "task_protocol": ("TERMINAL",),
            "tasks": ("cancel_task", "get_task"),
        },
    )
