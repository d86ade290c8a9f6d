-- Tool results recorded under an idempotency key before a node uses them, so a
-- node re-run after a crash reuses them instead of calling the tool again
-- (engine/tools/idempotency.py derives the key). Only successes are recorded.
CREATE TABLE plait_tool_results (
    key         text PRIMARY KEY,
    thread_id   text NOT NULL,
    run_id      text,
    node        text NOT NULL,
    tool        text NOT NULL,
    args        jsonb NOT NULL,
    result      jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- For deleting a thread's records with the thread (no foreign key: a record is
-- written by whatever runs the thread, which need not have created a row for it).
CREATE INDEX plait_tool_results_thread ON plait_tool_results (thread_id);
