"""MCP tools: sessions, the tool that calls them, the Tasks extension, large results.

See docs/mcp.md. Every MCP call goes through ``plait.engine.tools.gateway.call_tool``
like any tool, so allowlists, risk, retries, breakers, idempotency records and
the audit trail apply unchanged.
"""
