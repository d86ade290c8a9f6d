-- Crons (/runs/crons): schedules that create runs. Workers fire a due cron in
-- one transaction: the run, and the cron's next_run_at moved past now, under
-- FOR UPDATE SKIP LOCKED, so each time fires once across every worker and a
-- restart loses nothing (server/crons.py).
CREATE TABLE plait_crons (
    cron_id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id        text NOT NULL,
    assistant_id     text NOT NULL,
    -- The stored id of the thread its runs go to (a deleted thread takes its
    -- crons along); NULL: a new thread per run.
    thread_id        text REFERENCES plait_threads (thread_id) ON DELETE CASCADE,
    schedule         text NOT NULL,
    timezone         text NOT NULL DEFAULT 'UTC',
    end_time         timestamptz,
    enabled          boolean NOT NULL DEFAULT true,
    on_run_completed text,
    -- The run-creating fields as the client sent them, and the run kwargs made of them.
    payload          jsonb NOT NULL,
    kwargs           jsonb NOT NULL,
    metadata         jsonb NOT NULL DEFAULT '{}',
    -- NULL once the schedule has no time left before end_time.
    next_run_at      timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX plait_crons_due ON plait_crons (next_run_at) WHERE enabled;
-- Threads a cron made for one run, deleted once it ended (on_run_completed: delete).
CREATE INDEX plait_threads_of_crons ON plait_threads (updated_at)
    WHERE (metadata -> 'plait_cron' ->> 'on_run_completed') = 'delete';
CREATE INDEX plait_crons_tenant ON plait_crons (tenant_id, created_at);
