-- The order a claim takes a tenant's pending runs of one priority in: longest waiting
-- first (since they could start), then queue order. Within one priority that is their
-- effective priority's order (aging: server/queue/queueing.py), so a claim reads the
-- first few of each tenant and priority here, not every pending run: with a thousand
-- runs queued it read them all for each run it started. Its leading column also lists
-- the tenants that have pending runs, one probe each.
CREATE INDEX plait_runs_claim_order
    ON plait_runs (tenant_id, priority, (coalesce(not_before, created_at)), queue_id)
    WHERE status = 'pending';
