"""A stdio MCP server that tells its process id (``children.yaml``)."""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("children")


@server.tool()
def pid() -> dict[str, int]:
    """This server's process id."""
    return {"pid": os.getpid()}


if __name__ == "__main__":
    server.run()
