/**
 * What changed between two versions of a graph, from their models: nodes
 * added, removed and changed (with each changed field before and after), and
 * edges added, removed and changed (same ends, another condition or label).
 */
import type { GraphEdge, GraphModel, GraphNode } from "../spec/model";

export type DiffMark = "added" | "removed" | "changed";

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

export interface EdgeChange {
  before: GraphEdge;
  after: GraphEdge;
}

export interface GraphDiffResult {
  nodes: { added: string[]; removed: string[]; changed: Record<string, FieldChange[]> };
  edges: { added: GraphEdge[]; removed: GraphEdge[]; changed: EdgeChange[] };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The fields of a node that differ (missing on one side reads `undefined`). */
export function fieldChanges(before: GraphNode, after: GraphNode): FieldChange[] {
  const names = [...new Set([...Object.keys(before.fields), ...Object.keys(after.fields)])];
  return names.filter((f) => !same(before.fields[f], after.fields[f])).map((field) => ({ field, before: before.fields[field], after: after.fields[field] }));
}

/** Edges a parallel node derives (branch, join) and control edges are told apart. */
const family = (e: GraphEdge) => (e.kind === "branch" || e.kind === "join" ? e.kind : "flow");
const ends = (e: GraphEdge) => `${family(e)}:${e.source}>${e.target}`;
const exact = (e: GraphEdge) => `${ends(e)}:${e.kind}:${e.label ?? ""}`;

export function graphDiff(before: GraphModel, after: GraphModel): GraphDiffResult {
  const old = new Map(before.nodes.map((n) => [n.id, n]));
  const now = new Map(after.nodes.map((n) => [n.id, n]));
  const changed: Record<string, FieldChange[]> = {};
  for (const [id, node] of now) {
    const was = old.get(id);
    if (!was) continue;
    const fields = fieldChanges(was, node);
    if (fields.length > 0) changed[id] = fields;
  }

  // Edges are matched by their ends and label; what is left over on both
  // sides with the same ends changed its label (condition, route label, kind).
  const remaining = new Map<string, GraphEdge[]>();
  for (const e of before.edges) remaining.set(exact(e), [...(remaining.get(exact(e)) ?? []), e]);
  const added: GraphEdge[] = [];
  for (const e of after.edges) {
    const match = remaining.get(exact(e));
    if (match && match.length > 0) match.shift();
    else added.push(e);
  }
  const removed = [...remaining.values()].flat();
  const edgeChanges: EdgeChange[] = [];
  for (const e of [...added]) {
    const i = removed.findIndex((r) => ends(r) === ends(e));
    if (i < 0) continue;
    edgeChanges.push({ before: removed[i], after: e });
    removed.splice(i, 1);
    added.splice(added.indexOf(e), 1);
  }
  return {
    nodes: {
      added: after.nodes.filter((n) => !old.has(n.id)).map((n) => n.id),
      removed: before.nodes.filter((n) => !now.has(n.id)).map((n) => n.id),
      changed,
    },
    edges: { added, removed, changed: edgeChanges },
  };
}

/** Node id -> mark. */
export function nodeMarks(diff: GraphDiffResult): Record<string, DiffMark> {
  const marks: Record<string, DiffMark> = {};
  for (const id of diff.nodes.added) marks[id] = "added";
  for (const id of diff.nodes.removed) marks[id] = "removed";
  for (const id of Object.keys(diff.nodes.changed)) marks[id] = "changed";
  return marks;
}

/** Edge id (of the newer model) -> mark, for the edges that exist there. */
export function edgeMarks(diff: GraphDiffResult): Record<string, DiffMark> {
  const marks: Record<string, DiffMark> = {};
  for (const e of diff.edges.added) marks[e.id] = "added";
  for (const c of diff.edges.changed) marks[c.after.id] = "changed";
  return marks;
}

/** "a → b (when x)" for lists. */
export function edgeLabel(e: GraphEdge): string {
  return `${e.source} → ${e.target}${e.label && e.kind !== "default" && e.kind !== "route-default" ? ` (${e.kind === "route" ? "label " : "when "}${e.label})` : e.kind === "default" || e.kind === "route-default" ? " (default)" : ""}`;
}
