-- Poison runs end (dead letters) and a worker that lost a run's lease cannot
-- write for it any more (fencing): docs/decisions.md 60 and 61.

ALTER TABLE plait_runs
    -- Attempts whose worker lost the lease (it died, stalled or was cut off):
    -- counted by the claim that takes the run over; reset by a requeue.
    ADD COLUMN lost_attempts integer NOT NULL DEFAULT 0,
    -- The spec's `max_attempts` when the run was created (NULL: the worker's).
    ADD COLUMN max_attempts integer CHECK (max_attempts >= 1),
    -- Why the run was dead-lettered ({reason, attempts, max_attempts, at}); NULL otherwise.
    ADD COLUMN dead_letter jsonb;

-- The `error` and `end` events of an attempt a requeue continued past: kept in
-- the journal, not sent to streams (an SDK stops at either).
ALTER TABLE plait_run_events
    ADD COLUMN superseded boolean NOT NULL DEFAULT false;

-- For the rest of the caller's transaction, the session ends if its client goes
-- silent (unanswered keepalives every second, nothing acknowledged for
-- `p_silence_ms`): a worker cut off in the middle of a transaction must not
-- keep the locks it took (the claim lock, its run's row) until its link comes
-- back. Outside such transactions sessions keep TCP's patience, so a short
-- network blip costs no session.
CREATE FUNCTION plait_hold_session(p_silence_ms integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('tcp_keepalives_idle', '1', true),
            set_config('tcp_keepalives_interval', '1', true),
            set_config('tcp_user_timeout', greatest(p_silence_ms, 1000)::text, true);
END
$$;

-- The fence of every write a worker makes for a run outside the queue's own
-- statements (checkpoints, tool results, approvals): called first in the
-- write's transaction, it holds the run row in SHARE mode until the write
-- commits. A takeover (FOR UPDATE SKIP LOCKED) skips the row meanwhile and any
-- other change of the run waits; a change already in progress is waited for
-- and then seen. It raises PLA01 when the lease is not `owner`'s for `attempt`.
-- The session may stay silent until the lease would expire, plus a second.
CREATE FUNCTION plait_fence(p_run_id text, p_owner text, p_attempt integer)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_expires timestamptz;
BEGIN
    SELECT lease_expires_at INTO v_expires FROM plait_runs
    WHERE run_id = p_run_id AND lease_owner = p_owner AND attempt = p_attempt
      AND status = 'running'
    FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the lease of run % (attempt %) is no longer held by %',
            p_run_id, p_attempt, p_owner
            USING ERRCODE = 'PLA01';
    END IF;
    PERFORM plait_hold_session(
        (extract(epoch FROM coalesce(v_expires, now()) - now()) * 1000)::integer + 1000);
END
$$;
