-- The interrupts a task tool call raised, in order: each park while its task ran
-- ({"kind": "park"}) and each question of the task a person answers
-- ({"kind": "question", "key", "request"}). The re-run of the node raises them
-- again in that order, so LangGraph hands each its own decision back
-- (engine/tools/mcp/tool.py).
ALTER TABLE plait_mcp_tasks ADD COLUMN interrupts jsonb NOT NULL DEFAULT '[]'::jsonb;
