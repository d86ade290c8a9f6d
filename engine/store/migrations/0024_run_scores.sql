-- Evaluation (decision 93): one row per (run, grader) a sampled finished run owes a
-- score. Written in the transaction that records the run's end
-- (server/queue/runs.py finish_run), then claimed by workers under a lease like runs
-- (FOR UPDATE SKIP LOCKED: one grader call per row at a time) and settled as
-- `scored` or `failed`; the row is both the job and its result
-- (server/queue/scores.py owns this SQL).
CREATE TABLE plait_run_scores (
    run_id           text NOT NULL,
    grader           text NOT NULL,
    tenant_id        text NOT NULL,
    thread_id        text NOT NULL,
    graph            text NOT NULL,
    version          text NOT NULL,
    digest           text NOT NULL,
    status           text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'scored', 'failed')),
    score            double precision CHECK (score >= 0 AND score <= 1),
    reason           text,
    error            text,
    attempts         integer NOT NULL DEFAULT 0,
    lease_owner      text,
    lease_expires_at timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    scored_at        timestamptz,
    PRIMARY KEY (run_id, grader),
    CHECK (status <> 'scored' OR score IS NOT NULL)
);

-- What workers look for: scores still owed, oldest first.
CREATE INDEX plait_run_scores_due ON plait_run_scores (created_at) WHERE status = 'pending';
-- A graph's scores per version (GET /graphs/{name}/scores).
CREATE INDEX plait_run_scores_graph ON plait_run_scores (tenant_id, graph, version);

-- A run's approvals, raised or decided, for its trajectory (server/queue/trajectories.py).
CREATE INDEX plait_approvals_run ON plait_approvals (run_id);
CREATE INDEX plait_approvals_resume_run ON plait_approvals (resume_run_id)
    WHERE resume_run_id IS NOT NULL;
