-- The server: graph registry, API threads, the run queue, run journals,
-- approvals and idempotency keys.

-- Every spec version any process may run; workers compile from here, so a run
-- never depends on a file being present on the worker's machine.
CREATE TABLE plait_graph_versions (
    name         text NOT NULL,
    version      text NOT NULL,
    digest       text NOT NULL,
    yaml         text NOT NULL,
    -- uuid5 of "name@version": the Agent Server's assistant id.
    assistant_id text NOT NULL UNIQUE,
    -- The file (relative to the specs folder) it came from or was written to.
    file         text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (name, version)
);

-- API threads exist before their first run: the graph is recorded by that run.
ALTER TABLE plait_threads
    ALTER COLUMN graph DROP NOT NULL,
    ALTER COLUMN version DROP NOT NULL,
    ALTER COLUMN digest DROP NOT NULL,
    ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN status text NOT NULL DEFAULT 'idle'
        CHECK (status IN ('idle', 'busy', 'interrupted', 'error'));

CREATE INDEX plait_threads_created ON plait_threads (created_at);

-- The run row is the queue entry.
ALTER TABLE plait_runs
    -- Order of runs, per thread and overall: allocated while the thread's row
    -- is locked, so it is the order in which runs were accepted.
    ADD COLUMN queue_id bigint GENERATED ALWAYS AS IDENTITY,
    ADD COLUMN assistant_id text,
    ADD COLUMN kwargs jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN multitask_strategy text NOT NULL DEFAULT 'reject'
        CHECK (multitask_strategy IN ('reject', 'enqueue', 'interrupt', 'rollback')),
    ADD COLUMN attempt integer NOT NULL DEFAULT 0,
    ADD COLUMN lease_owner text,
    ADD COLUMN lease_expires_at timestamptz,
    ADD COLUMN cancel_action text CHECK (cancel_action IN ('interrupt', 'rollback')),
    ADD COLUMN created_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN idempotency_key text,
    ADD COLUMN request_hash text,
    -- The journal's last seq (plait_run_events); bumped under the row lock.
    ADD COLUMN event_seq bigint NOT NULL DEFAULT 0;

-- Claiming scans pending runs in queue order.
CREATE INDEX plait_runs_pending ON plait_runs (queue_id) WHERE status = 'pending';
-- Expired leases are found among running runs.
CREATE INDEX plait_runs_running ON plait_runs (lease_expires_at) WHERE status = 'running';
-- At most one running queued run per thread: the queue's invariant, enforced.
-- Runs of the CLI (no lease) are outside the queue: a killed CLI run stays
-- 'running' and must not block the thread.
CREATE UNIQUE INDEX plait_runs_one_running ON plait_runs (thread_id)
    WHERE status = 'running' AND lease_owner IS NOT NULL;
CREATE INDEX plait_runs_thread_queue ON plait_runs (thread_id, queue_id);

-- Each run's events in order, as sent over SSE.
CREATE TABLE plait_run_events (
    run_id     text NOT NULL REFERENCES plait_runs (run_id) ON DELETE CASCADE,
    seq        bigint NOT NULL,
    event      text NOT NULL,
    data       jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);

-- Interrupts waiting for a person's decision (the approvals inbox).
CREATE TABLE plait_approvals (
    approval_id  text PRIMARY KEY,
    thread_id    text NOT NULL REFERENCES plait_threads (thread_id) ON DELETE CASCADE,
    -- No foreign key: the audit trail outlives a rolled-back run.
    run_id       text NOT NULL,
    graph        text NOT NULL,
    version      text NOT NULL,
    node         text,
    interrupt_id text NOT NULL,
    action       text,
    arguments    jsonb,
    reason       text,
    expires_at   timestamptz,
    on_expire    text NOT NULL DEFAULT 'reject',
    status       text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'approved', 'rejected', 'edited', 'expired')),
    decision     jsonb,
    decided_by   text,
    -- The run that carried the decision back into the graph.
    resume_run_id text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    decided_at   timestamptz,
    -- A reclaimed or partially resumed run raises the same interrupt again.
    UNIQUE (thread_id, interrupt_id)
);

CREATE INDEX plait_approvals_status ON plait_approvals (status, created_at);
CREATE INDEX plait_approvals_expiry ON plait_approvals (expires_at) WHERE status = 'pending';

-- Idempotency-Key of run-creating requests: the same key and body give the same run.
CREATE TABLE plait_idempotency_keys (
    key          text NOT NULL,
    route        text NOT NULL,
    request_hash text NOT NULL,
    -- Deferred: the key is claimed first, then the run inserted in the same transaction.
    run_id       text NOT NULL REFERENCES plait_runs (run_id)
        ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (key, route)
);
