-- Secrets an operator grants a tenant: the only values its specs can read on a
-- server (engine/runtime/secrets.py, server/auth/tenant_secrets.py). Names
-- starting with PLAIT_ are Plait's own settings and never a secret. Values are
-- stored as given: protect the database and its backups as the secrets themselves.
CREATE TABLE plait_tenant_secrets (
    tenant_id  text NOT NULL REFERENCES plait_tenants (tenant_id) ON DELETE CASCADE,
    name       text NOT NULL
        CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,127}$' AND upper(name) NOT LIKE 'PLAIT\_%'),
    value      text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, name)
);

-- A parked MCP task is polled with its tenant's secrets: the row names the
-- tenant (from its thread, as tool results do), also once the thread is gone.
ALTER TABLE plait_mcp_tasks ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
UPDATE plait_mcp_tasks m SET tenant_id = t.tenant_id
    FROM plait_threads t WHERE t.thread_id = m.thread_id;
CREATE TRIGGER plait_mcp_tasks_tenant BEFORE INSERT ON plait_mcp_tasks
    FOR EACH ROW EXECUTE FUNCTION plait_tenant_of_thread();

-- Thread ids are the tenant's own (docs/decisions.md, 59): a thread of a tenant
-- other than 'default' is stored as '<tenant>/<its id>' wherever a thread id is
-- kept (server/queue/threads.py), so another tenant's id answers as a free one.
-- Rows written before take that form here; checkpoints too, when their tables
-- exist already (the checkpointer creates them after these migrations).
CREATE TEMP TABLE plait_thread_renames ON COMMIT DROP AS
    SELECT thread_id AS old_id, tenant_id || '/' || thread_id AS new_id
    FROM plait_threads WHERE tenant_id <> 'default';

ALTER TABLE plait_runs DROP CONSTRAINT plait_runs_thread_id_fkey;
ALTER TABLE plait_approvals DROP CONSTRAINT plait_approvals_thread_id_fkey;

UPDATE plait_threads t SET thread_id = r.new_id
    FROM plait_thread_renames r WHERE t.thread_id = r.old_id;
UPDATE plait_runs t SET thread_id = r.new_id
    FROM plait_thread_renames r WHERE t.thread_id = r.old_id;
UPDATE plait_approvals t SET thread_id = r.new_id
    FROM plait_thread_renames r WHERE t.thread_id = r.old_id;
UPDATE plait_tool_results t SET thread_id = r.new_id
    FROM plait_thread_renames r WHERE t.thread_id = r.old_id;
UPDATE plait_audit t SET thread_id = r.new_id
    FROM plait_thread_renames r WHERE t.thread_id = r.old_id;
UPDATE plait_mcp_tasks t SET thread_id = r.new_id
    FROM plait_thread_renames r WHERE t.thread_id = r.old_id;

DO $$
BEGIN
    IF to_regclass('checkpoints') IS NOT NULL THEN
        UPDATE checkpoints t SET thread_id = r.new_id
            FROM plait_thread_renames r WHERE t.thread_id = r.old_id;
        UPDATE checkpoint_blobs t SET thread_id = r.new_id
            FROM plait_thread_renames r WHERE t.thread_id = r.old_id;
        UPDATE checkpoint_writes t SET thread_id = r.new_id
            FROM plait_thread_renames r WHERE t.thread_id = r.old_id;
    END IF;
END
$$;

ALTER TABLE plait_runs ADD CONSTRAINT plait_runs_thread_id_fkey
    FOREIGN KEY (thread_id) REFERENCES plait_threads (thread_id) ON DELETE CASCADE;
ALTER TABLE plait_approvals ADD CONSTRAINT plait_approvals_thread_id_fkey
    FOREIGN KEY (thread_id) REFERENCES plait_threads (thread_id) ON DELETE CASCADE;
