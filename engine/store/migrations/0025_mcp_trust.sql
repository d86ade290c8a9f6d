-- The MCP servers an operator trusts for a tenant (server/auth/mcp_trust.py owns
-- this table's SQL; docs/decisions.md 94). No row: the tenant's default (the
-- 'default' tenant trusts the servers its specs declare, others trust none). A
-- row with an empty list trusts none. Entries are the operator's text: a URL
-- for an http server, a command line for a stdio one.
CREATE TABLE plait_mcp_trust (
    tenant_id  text PRIMARY KEY REFERENCES plait_tenants (tenant_id) ON DELETE CASCADE,
    servers    text[] NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
