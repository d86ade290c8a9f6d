-- An approval's arguments keep the order the graph gave them (`json`, not `jsonb`, which
-- sorts keys by length): the inbox then lists them as the run's card on the canvas does
-- (`order_id`, then `amount`), and as the tool's author wrote them. Nothing queries inside
-- them. Rows written before keep the order jsonb left them in.
ALTER TABLE plait_approvals ALTER COLUMN arguments TYPE json USING arguments::json;
