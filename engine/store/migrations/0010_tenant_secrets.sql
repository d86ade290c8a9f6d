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
