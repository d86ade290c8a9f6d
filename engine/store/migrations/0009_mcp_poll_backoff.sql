-- The MCP task poller backs off a parked task whose poll fails (an unreachable
-- server, a run or graph gone) instead of trying it again every interval.
ALTER TABLE plait_mcp_tasks
    ADD COLUMN poll_errors  integer NOT NULL DEFAULT 0,
    ADD COLUMN next_poll_at timestamptz;
