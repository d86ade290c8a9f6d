-- Priorities and expiry of queued runs (docs/decisions.md 91).
--
-- `priority`: 0 (lowest) to 9 (highest), 5 when neither the request nor the
-- spec (`spec.queue.priority`) says. It orders claims within a tenant's turn,
-- raised by the run's wait (aging), never within a thread.
-- `expires_at`: a pending run not started by then ends `expired` and never runs
-- (NULL: it waits as long as it takes).
ALTER TABLE plait_runs
    ADD COLUMN priority smallint NOT NULL DEFAULT 5 CHECK (priority BETWEEN 0 AND 9),
    ADD COLUMN expires_at timestamptz;

-- `expired` joins the states (engine/run/states.py owns them).
ALTER TABLE plait_runs DROP CONSTRAINT plait_runs_state_check;
ALTER TABLE plait_runs ADD CONSTRAINT plait_runs_state_check CHECK (state IN (
    'queued', 'running', 'retrying', 'waiting_for_person', 'waiting_for_tool',
    'succeeded', 'partially_succeeded', 'failed', 'timed_out', 'cancelled',
    'dead_lettered', 'expired'
));

-- The workers' expiry sweep reads the pending runs past their deadline.
CREATE INDEX plait_runs_pending_expiry ON plait_runs (expires_at)
    WHERE status = 'pending' AND expires_at IS NOT NULL AND attempt = 0;
