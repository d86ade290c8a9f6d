-- MCP tools: large results stored by reference, and long-running calls made
-- through the MCP Tasks extension (engine/tools/mcp/).

-- Content-addressed blobs: a tool result too large for the run's state is
-- stored once here under the SHA-256 of its bytes; the state holds a small
-- reference {"$ref": "plait-blob:sha256:<hex>", ...} (docs/mcp.md).
CREATE TABLE plait_blobs (
    digest      text PRIMARY KEY,          -- "sha256:<hex>"
    media_type  text NOT NULL,
    size        bigint NOT NULL,
    content     bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per MCP tool call that runs as a task, under the call's idempotency
-- key: written before the run parks, so a resumed run (or the poller of any
-- worker) finds the task instead of starting another one.
CREATE TABLE plait_mcp_tasks (
    key            text PRIMARY KEY,
    thread_id      text NOT NULL,
    run_id         text,
    node           text NOT NULL,
    -- The server's definition from the spec (secret names, never values), so
    -- a poller can reach it without the spec.
    server_name    text NOT NULL,
    server         jsonb NOT NULL,
    tool           text NOT NULL,
    task_id        text NOT NULL,
    status         text NOT NULL DEFAULT 'working'
        CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    -- Set when the run parked on the task (server only): the interrupt to
    -- resume and the run that stopped on it.
    interrupt_id   text,
    parked_run_id  text,
    -- The run that resumed the parked thread once the task ended.
    resume_run_id  text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);

-- The poller's scan: parked calls not resumed yet.
CREATE INDEX plait_mcp_tasks_parked ON plait_mcp_tasks (created_at)
    WHERE interrupt_id IS NOT NULL AND resume_run_id IS NULL;
CREATE INDEX plait_mcp_tasks_thread ON plait_mcp_tasks (thread_id);
