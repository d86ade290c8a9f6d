-- The webhook outbox: one row per call a run's end owes its `webhook`, written
-- in the transaction that records the end (server/queue/runs.py finish_run).
-- Workers claim due rows under a lease (a dead sender's row is claimed again
-- once it expires) and retry failures with back-off (server/webhooks.py).
CREATE TABLE plait_webhook_deliveries (
    delivery_id      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    run_id           text NOT NULL,
    tenant_id        text NOT NULL,
    url              text NOT NULL,
    -- The run as it ended, with its final values: the body of every attempt.
    payload          jsonb NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    lease_owner      text,
    lease_expires_at timestamptz,
    delivered_at     timestamptz,
    -- Set when the attempts ran out: never tried again.
    failed_at        timestamptz,
    last_error       text
);

-- What senders look for: deliveries still owed, by when they are due.
CREATE INDEX plait_webhook_deliveries_due ON plait_webhook_deliveries (next_attempt_at)
    WHERE delivered_at IS NULL AND failed_at IS NULL;
CREATE INDEX plait_webhook_deliveries_run ON plait_webhook_deliveries (run_id);
