-- What a client sent keeps its keys in the order sent (`json`, not `jsonb`, which orders
-- an object's keys by length): a run's kwargs (its input, a resume's answer such as an
-- approver's edited arguments), an approval's decision, a cron's fields and the run
-- kwargs made of them. The graph gets the input, and the state and the decided tab show
-- the edited arguments, as written (docs/decisions.md 112). Nothing queries inside
-- them but the end's `kwargs ->> 'webhook'`, asked only of a run that has one. Rows
-- written before keep the order jsonb left them in.
ALTER TABLE plait_runs ALTER COLUMN kwargs DROP DEFAULT;
ALTER TABLE plait_runs ALTER COLUMN kwargs TYPE json USING kwargs::json;
ALTER TABLE plait_runs ALTER COLUMN kwargs SET DEFAULT '{}';
ALTER TABLE plait_approvals ALTER COLUMN decision TYPE json USING decision::json;
ALTER TABLE plait_crons
    ALTER COLUMN payload TYPE json USING payload::json,
    ALTER COLUMN kwargs TYPE json USING kwargs::json;
