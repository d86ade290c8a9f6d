-- That a non-idempotent tool call began: written and committed before the call
-- acts, so a re-run that finds the intent and no result in plait_tool_results
-- knows the call may already have happened (engine/tools/in_doubt.py).
-- One row per idempotency key, kept with the result.
CREATE TABLE plait_tool_intents (
    key          text PRIMARY KEY,
    thread_id    text NOT NULL,
    run_id       text,
    node         text NOT NULL,
    tool         text NOT NULL,
    args         jsonb NOT NULL,
    -- How many times the call began. An in-doubt approval's interrupt id names
    -- the attempt it is about, so one answer lets one more attempt begin.
    attempts     integer NOT NULL CHECK (attempts >= 1),
    -- The run whose in-doubt answer let the last attempt begin.
    answered_run text,
    -- The last attempt parked its run (an MCP task) instead of dying.
    parked       boolean NOT NULL DEFAULT false,
    began_at     timestamptz NOT NULL DEFAULT now(),
    tenant_id    text NOT NULL DEFAULT 'default'
);

CREATE INDEX plait_tool_intents_thread ON plait_tool_intents (thread_id);

-- Like tool results: written by the engine, which knows no tenants.
CREATE TRIGGER plait_tool_intents_tenant BEFORE INSERT ON plait_tool_intents
    FOR EACH ROW EXECUTE FUNCTION plait_tenant_of_thread();
