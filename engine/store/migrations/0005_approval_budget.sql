-- What the run had spent (steps, tokens, cost, wall time) when it parked on
-- an approval, so the person deciding sees it. NULL when the spec sets no budget.
ALTER TABLE plait_approvals ADD COLUMN budget_used jsonb;
