/** Node marks of a version diff (shown on the canvas through the editor store's `nodeDiff`). */

import type { GraphDiff } from "../api/client";
import type { NodeDiffMark } from "../store/editorStore";

/** Node id -> mark, from the server's diff of two versions. */
export function marksOf(diff: GraphDiff): Record<string, NodeDiffMark> {
  const marks: Record<string, NodeDiffMark> = {};
  for (const node of diff.nodes.added) marks[node] = "added";
  for (const node of diff.nodes.removed) marks[node] = "removed";
  for (const node of diff.nodes.changed) marks[node] = "changed";
  return marks;
}
