"""The tool gateway: python and MCP tools, allowlists, risk, idempotency records.

Also the processes tool calls start. The MCP client is a surface of its own,
``plait.engine.tools.mcp``.
"""

from plait.engine.tools.children import stop_all as stop_tool_processes
from plait.engine.tools.idempotency import ToolResultStore

__all__ = ["ToolResultStore", "stop_tool_processes"]
