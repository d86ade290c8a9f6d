"""Workers: claim runs and execute them, and the pollers beside them (crons, webhooks, MCP)."""
