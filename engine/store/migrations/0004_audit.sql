-- The audit trail (engine/runtime/audit.py): every tool call, approval decision
-- and policy refusal, with the run, the step and who acted. Append-only.
-- `tenant` stays null until runs belong to tenants.
CREATE TABLE plait_audit (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        text NOT NULL,
    tenant      text,
    thread_id   text,
    run_id      text,
    node        text NOT NULL,
    step        text,
    tool        text,
    actor       text NOT NULL,
    detail      jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX plait_audit_run ON plait_audit (run_id);
CREATE INDEX plait_audit_thread ON plait_audit (thread_id);
