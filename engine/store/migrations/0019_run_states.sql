-- A run's state as Plait tells it, beside the Agent Server's `status`
-- (docs/decisions.md 87; the states and their transitions: engine/run/states.py).

ALTER TABLE plait_runs
    ADD COLUMN state text NOT NULL DEFAULT 'queued' CHECK (state IN (
        'queued', 'running', 'retrying', 'waiting_for_person', 'waiting_for_tool',
        'succeeded', 'partially_succeeded', 'failed', 'timed_out', 'cancelled',
        'dead_lettered'
    )),
    -- What the state's label needs: map losses {lost_items, items, maps}, a
    -- retry {retry: {...}}, what a parked run waits on {waiting: {...}}.
    ADD COLUMN state_detail jsonb;

-- Runs recorded before: the state their status and records imply. A run that
-- stopped on an interrupt ended `success` with its thread `interrupted`.
UPDATE plait_runs r SET state = CASE
    WHEN r.dead_letter IS NOT NULL THEN 'dead_lettered'
    WHEN r.status = 'pending' THEN 'queued'
    WHEN r.status = 'running' THEN 'running'
    WHEN r.status = 'error' THEN 'failed'
    WHEN r.status = 'timeout' THEN 'timed_out'
    WHEN r.status = 'interrupted' THEN 'cancelled'
    ELSE 'succeeded'
END;

-- For /metrics' gauge of runs by state.
CREATE INDEX plait_runs_state ON plait_runs (state);
