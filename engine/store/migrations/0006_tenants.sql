-- Tenants, their API keys and daily usage; every tenant-owned row names its tenant.
-- Rows written before this migration (and every row of the single-user mode)
-- belong to the tenant 'default'.

CREATE TABLE plait_tenants (
    tenant_id        text PRIMARY KEY CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    name             text NOT NULL DEFAULT '',
    -- Runs of the tenant executing at once, across all workers (NULL: no cap).
    max_running_runs integer CHECK (max_running_runs > 0),
    -- Daily budgets (UTC days), checked before every step and model call (NULL: none).
    daily_max_steps  bigint CHECK (daily_max_steps > 0),
    daily_max_tokens bigint CHECK (daily_max_tokens > 0),
    daily_max_cost   double precision CHECK (daily_max_cost > 0),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

INSERT INTO plait_tenants (tenant_id, name) VALUES ('default', 'default');

-- Keys are random 256-bit tokens, so one SHA-256 is the right hash (no salt or
-- slow KDF needed: there is nothing to brute-force). key_id is the public part
-- shown in listings; the secret is shown once, when the key is made.
CREATE TABLE plait_api_keys (
    key_id      text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES plait_tenants (tenant_id) ON DELETE CASCADE,
    key_hash    text NOT NULL UNIQUE,
    role        text NOT NULL CHECK (role IN ('admin', 'member')),
    name        text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);

CREATE INDEX plait_api_keys_tenant ON plait_api_keys (tenant_id, created_at);

-- What each tenant spent per UTC day, added to as runs spend it.
CREATE TABLE plait_tenant_usage (
    tenant_id     text NOT NULL,
    day           date NOT NULL,
    steps         bigint NOT NULL DEFAULT 0,
    input_tokens  bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    cost          double precision NOT NULL DEFAULT 0,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, day)
);

-- Threads, runs and approvals: scoped by tenant in every query.
ALTER TABLE plait_threads ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
CREATE INDEX plait_threads_tenant_created ON plait_threads (tenant_id, created_at);

ALTER TABLE plait_runs ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
-- Claiming counts running runs per tenant.
CREATE INDEX plait_runs_tenant_running ON plait_runs (tenant_id) WHERE status = 'running';

ALTER TABLE plait_approvals ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
DROP INDEX plait_approvals_status;
CREATE INDEX plait_approvals_tenant_status ON plait_approvals (tenant_id, status, created_at);

-- Graph versions: each tenant publishes its own; `default`'s (the specs
-- folder's) are visible read-only to every tenant (docs/decisions.md).
ALTER TABLE plait_graph_versions ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
ALTER TABLE plait_graph_versions DROP CONSTRAINT plait_graph_versions_pkey;
ALTER TABLE plait_graph_versions ADD PRIMARY KEY (tenant_id, name, version);

-- An idempotency key is the client's: two tenants may pick the same one.
ALTER TABLE plait_idempotency_keys ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
ALTER TABLE plait_idempotency_keys DROP CONSTRAINT plait_idempotency_keys_pkey;
ALTER TABLE plait_idempotency_keys ADD PRIMARY KEY (tenant_id, key, route);

-- Tool results and audit records are written by the engine, which knows no
-- tenants: they take their thread's tenant when the thread is known.
ALTER TABLE plait_tool_results ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
CREATE INDEX plait_audit_tenant ON plait_audit (tenant, created_at);

CREATE FUNCTION plait_tenant_of_thread() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.thread_id IS NOT NULL THEN
        IF TG_TABLE_NAME = 'plait_audit' THEN
            IF NEW.tenant IS NULL THEN
                NEW.tenant := COALESCE(
                    (SELECT tenant_id FROM plait_threads WHERE thread_id = NEW.thread_id),
                    'default');
            END IF;
        ELSE
            NEW.tenant_id := COALESCE(
                (SELECT tenant_id FROM plait_threads WHERE thread_id = NEW.thread_id),
                NEW.tenant_id);
        END IF;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER plait_tool_results_tenant BEFORE INSERT ON plait_tool_results
    FOR EACH ROW EXECUTE FUNCTION plait_tenant_of_thread();
CREATE TRIGGER plait_audit_tenant BEFORE INSERT ON plait_audit
    FOR EACH ROW EXECUTE FUNCTION plait_tenant_of_thread();
UPDATE plait_audit SET tenant = 'default' WHERE tenant IS NULL;
