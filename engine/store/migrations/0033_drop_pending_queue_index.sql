-- A claim takes a tenant's pending runs of one priority from plait_runs_claim_order
-- (0028), which holds them in the order they are taken. This older index of pending
-- runs by queue_id served no query since, but the planner could still choose it: with
-- statistics gathered while the queue was empty (autovacuum analyzes when it likes),
-- both indexes looked empty, the smaller one cheaper, and each claim read every pending
-- run of each priority through it and sorted them (13,006 rows for one claim with 1,000
-- queued: tests/integration/server/queue/test_claim_cost.py). Queries on pending runs
-- now have the claim order's index alone, and a run queued writes one index entry less.
DROP INDEX IF EXISTS plait_runs_pending;
