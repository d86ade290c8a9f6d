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

-- `plait run` recorded a run that stopped on an interrupt as `interrupted`; the
-- Agent Server (and now Plait, for every run) records it as `success`. Runs the
-- queue ended `interrupted` were cancelled, and carry their `cancel_action`.
UPDATE plait_runs SET status = 'success'
WHERE status = 'interrupted' AND cancel_action IS NULL;

-- Runs recorded before: the state their status and records imply. A run that
-- stopped on an interrupt ended `success` with its thread `interrupted`, and is
-- its thread's newest run: it waits on a tool when an MCP task is parked on it,
-- else on a person.
UPDATE plait_runs r SET state = CASE
    WHEN r.dead_letter IS NOT NULL THEN 'dead_lettered'
    WHEN r.status = 'success'
         AND EXISTS (SELECT 1 FROM plait_threads t
                     WHERE t.thread_id = r.thread_id AND t.status = 'interrupted')
         AND NOT EXISTS (SELECT 1 FROM plait_runs o
                         WHERE o.thread_id = r.thread_id AND o.queue_id > r.queue_id)
    THEN CASE WHEN EXISTS (SELECT 1 FROM plait_mcp_tasks m
                           WHERE m.parked_run_id = r.run_id AND m.resume_run_id IS NULL)
              THEN 'waiting_for_tool' ELSE 'waiting_for_person' END
    WHEN r.status = 'pending' THEN 'queued'
    WHEN r.status = 'running' THEN 'running'
    WHEN r.status = 'error' THEN 'failed'
    WHEN r.status = 'timeout' THEN 'timed_out'
    WHEN r.status = 'interrupted' THEN 'cancelled'
    ELSE 'succeeded'
END;
-- No index on `state`: nothing looks runs up by it, and /metrics counts runs by
-- state in one scan as it does by status.
