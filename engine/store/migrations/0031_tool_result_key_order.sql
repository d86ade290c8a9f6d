-- A tool's recorded arguments and result, and a webhook's payload, keep their keys in the
-- order written (`json`, not `jsonb`, which orders an object's keys by length): the graph
-- gets a tool's result read back from its record (also on the first call), so the state,
-- the run view and a webhook's `values` showed `amount` before `refund_id` where the tool
-- returned `refund_id` first (docs/decisions.md 112). Nothing queries inside them. Rows
-- written before keep the order jsonb left them in.
ALTER TABLE plait_tool_results
    ALTER COLUMN args TYPE json USING args::json,
    ALTER COLUMN result TYPE json USING result::json;
ALTER TABLE plait_tool_intents ALTER COLUMN args TYPE json USING args::json;
ALTER TABLE plait_webhook_deliveries ALTER COLUMN payload TYPE json USING payload::json;
