-- `after_seconds` of a run-creating request: the run stays pending, and no
-- worker claims it, before this time (NULL: at once).
ALTER TABLE plait_runs ADD COLUMN not_before timestamptz;
