-- Where the node that called a tool ran among subgraphs (engine/observability/node_path.py):
-- its id at the top level, `office/desk/lookup` inside subgraphs, `claims[1]/lookup` in
-- a map item's subgraph. `plait record` keeps tool results under it, so nodes of one id
-- in a spec and its subgraphs do not share recorded calls. NULL in rows written before:
-- where their node ran is not known (engine/run/replay.py places or refuses them).
ALTER TABLE plait_tool_results ADD COLUMN path text;
