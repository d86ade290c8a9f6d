-- An approval's arguments keep the order the graph gave them (`json`, not `jsonb`, which
-- orders keys by length, then bytes): the inbox lists them as the interrupt holds them,
-- which is what the run's card on the canvas shows (`order_id` before `sku` in both, where
-- jsonb put `sku` first). Nothing queries inside them. Rows written before keep the
-- order jsonb left them in.
ALTER TABLE plait_approvals ALTER COLUMN arguments TYPE json USING arguments::json;
