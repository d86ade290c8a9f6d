-- A2A tasks of the graphs served over A2A (server/a2a/task_store.py). The task
-- is the protobuf Task as JSON (MessageToDict); its id is the id of the Plait
-- thread that runs it. `owner` is the A2A caller scope (the SDK's owner
-- resolver), `tenant_id` the Plait tenant, `graph` the agent it was sent to:
-- a task is found only through the same graph, tenant and owner.
CREATE TABLE plait_a2a_tasks (
    task_id     text PRIMARY KEY,
    graph       text NOT NULL,
    tenant_id   text NOT NULL DEFAULT 'default',
    owner       text NOT NULL DEFAULT '',
    context_id  text NOT NULL,
    state       text NOT NULL,
    task        jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- ListTasks: a caller's tasks of one agent, newest first, optionally of one context.
CREATE INDEX plait_a2a_tasks_list ON plait_a2a_tasks (graph, tenant_id, owner, updated_at DESC);
