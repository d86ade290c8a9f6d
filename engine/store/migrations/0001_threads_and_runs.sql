-- Which graph (name, version, digest) each thread runs, and every run on it.
CREATE TABLE plait_threads (
    thread_id   text PRIMARY KEY,
    graph       text NOT NULL,
    version     text NOT NULL,
    digest      text NOT NULL,
    git_sha     text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE plait_runs (
    run_id      text PRIMARY KEY,
    thread_id   text NOT NULL REFERENCES plait_threads (thread_id) ON DELETE CASCADE,
    graph       text NOT NULL,
    version     text NOT NULL,
    digest      text NOT NULL,
    status      text NOT NULL
        CHECK (status IN ('pending', 'running', 'success', 'error', 'interrupted', 'timeout')),
    error       text,
    started_at  timestamptz NOT NULL DEFAULT now(),
    ended_at    timestamptz
);

CREATE INDEX plait_runs_thread_started ON plait_runs (thread_id, started_at);
