-- Every change to the graph versions or the rollouts is announced on the run events'
-- channel (payload `catalog`), so a server process may keep what it read of them until
-- the next change (server/graphs/catalog.py, docs/decisions.md 115). A statement
-- trigger: one notification per statement, folded into one per transaction by
-- PostgreSQL, whatever wrote it (the API, the CLI, a person with psql).
CREATE FUNCTION plait_catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('plait_run_events', 'catalog');
    RETURN NULL;
END
$$;

CREATE TRIGGER plait_graph_versions_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON plait_graph_versions
    FOR EACH STATEMENT EXECUTE FUNCTION plait_catalog_changed();
CREATE TRIGGER plait_rollouts_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON plait_rollouts
    FOR EACH STATEMENT EXECUTE FUNCTION plait_catalog_changed();
