-- A run's events keep their data's key order (`json`, not `jsonb`, which orders an
-- object's keys by length): a stream read back from the journal (a run opened after it
-- ran, a rejoined stream) then shows an approval's arguments, a node's output and the
-- state as the live stream did and as the spec wrote them. Nothing queries inside the
-- data; the appends unpack each batch with the json functions.
ALTER TABLE plait_run_events ALTER COLUMN data TYPE json USING data::json;
