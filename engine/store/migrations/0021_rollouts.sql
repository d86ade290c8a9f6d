-- Rollouts (decision 90): which versions of a graph a tenant's new threads
-- start on. A thread's first run on the graph by its bare name takes the
-- canary when its thread id hashes below `share` percent, else the stable
-- version, and stays on it for its life (server/graphs/rollouts.py).
CREATE TABLE plait_rollouts (
    tenant_id   text NOT NULL,
    graph       text NOT NULL,
    stable      text NOT NULL,
    canary      text,
    share       integer NOT NULL DEFAULT 0 CHECK (share BETWEEN 0 AND 100),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, graph),
    CHECK (canary IS NULL OR canary <> stable),
    CHECK (canary IS NOT NULL OR share = 0)
);

-- Runs started per version of a graph in a window (GET /graphs/{name}/rollout).
CREATE INDEX plait_runs_tenant_graph_created ON plait_runs (tenant_id, graph, created_at);
