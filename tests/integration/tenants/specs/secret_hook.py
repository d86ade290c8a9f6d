"""Operator-reviewed code the secret tests' specs call: a webhook tool and an env probe.

``send`` is the kind of tool an operator offers tenants: it posts to a URL
with the secrets it was given as headers. ``python -m secret_hook`` serves an
MCP tool over stdio that reports the process's environment and arguments.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import httpx


def send(url: str, secrets: dict[str, str]) -> dict[str, Any]:
    """POST to ``url`` with each secret as an ``x-secret-<name>`` header."""
    headers = {f"x-secret-{name.lower().replace('_', '-')}": v for name, v in secrets.items()}
    response = httpx.post(url, headers=headers, json={"names": sorted(secrets)}, timeout=10.0)
    return {"status": response.status_code}


def main() -> None:
    """An MCP stdio server with one tool, ``environment``."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("secret-probe")

    @server.tool()
    def environment() -> dict[str, Any]:
        """The process's environment and command line."""
        return {"env": dict(os.environ), "argv": list(sys.argv)}

    server.run()


if __name__ == "__main__":
    main()
