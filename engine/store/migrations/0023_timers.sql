-- Durable timers: a `wait` node's time, and an approval's expiry. Written when
-- the run parks (in the worker's fenced transaction that records its
-- approvals); a worker that finds one due locks it under its thread's lock,
-- marks it fired and creates the resume run in the same transaction, so each
-- fires once across every worker and restart (server/queue/timers.py,
-- server/workers/timer_firer.py).
CREATE TABLE plait_timers (
    timer_id      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id     text NOT NULL,
    thread_id     text NOT NULL REFERENCES plait_threads (thread_id) ON DELETE CASCADE,
    -- The run that parked, the interrupt the timer answers and its node.
    run_id        text NOT NULL,
    interrupt_id  text NOT NULL,
    node          text,
    -- 'wait': a wait node's time; 'approval_expiry': an approval's expires_at.
    kind          text NOT NULL CHECK (kind IN ('wait', 'approval_expiry')),
    graph         text NOT NULL,
    version       text NOT NULL,
    due_at        timestamptz NOT NULL,
    -- 'cancelled': answered first (a person's resume or decision), or its run cancelled.
    status        text NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'fired', 'cancelled')),
    fired_at      timestamptz,
    resume_run_id text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (thread_id, interrupt_id)
);

CREATE INDEX plait_timers_due ON plait_timers (due_at) WHERE status = 'pending';
CREATE INDEX plait_timers_of_run ON plait_timers (run_id) WHERE status = 'pending';

-- Pending approvals that expire were swept before; from now on their timers fire them.
INSERT INTO plait_timers (
    tenant_id, thread_id, run_id, interrupt_id, node, kind, graph, version, due_at
)
SELECT tenant_id, thread_id, run_id, interrupt_id, node, 'approval_expiry', graph, version,
       expires_at
FROM plait_approvals
WHERE status = 'pending' AND expires_at IS NOT NULL
ON CONFLICT (thread_id, interrupt_id) DO NOTHING;

-- A run parked on wait nodes is `waiting_for_timer` (engine/run/states.py).
-- 'expired' is migration 0022's state (queued runs past their deadline): this
-- list replaces that one, so it keeps it.
ALTER TABLE plait_runs DROP CONSTRAINT plait_runs_state_check;
ALTER TABLE plait_runs ADD CONSTRAINT plait_runs_state_check CHECK (state IN (
    'queued', 'running', 'retrying', 'waiting_for_person', 'waiting_for_tool',
    'waiting_for_timer', 'succeeded', 'partially_succeeded', 'failed', 'timed_out',
    'cancelled', 'dead_lettered', 'expired'
));
