-- A statement that checks what it may do fails with SQLSTATE PLA02 (and so rolls back its
-- transaction) by calling this: a new run created without reading its thread first
-- (server/queue/runs.py, _CHECK_NEW_RUN) is refused so when the thread cannot take it,
-- and the caller then reads why.
CREATE FUNCTION plait_refuse(p_why text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '%', p_why USING ERRCODE = 'PLA02';
END
$$;
