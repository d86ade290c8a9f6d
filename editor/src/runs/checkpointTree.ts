/**
 * A thread's checkpoints as a tree of branches, named in words ("input",
 * "after planner", "edited state"), without LangGraph's internal first
 * checkpoint (`step -1`, next `__start__`). A fork (a run from an older
 * checkpoint, or an edited state) is a checkpoint with more than one child.
 */

import type { ThreadState } from "../api/client";

export interface CheckpointRow {
  id: string;
  state: ThreadState;
  label: string;
  /** 0 for the first line of history; +1 per branch off it. */
  depth: number;
  /** This checkpoint starts a branch off its parent (not the parent's first child). */
  branch: boolean;
  /** This checkpoint has more than one child: runs went on from it more than once. */
  fork: boolean;
  /** The node that wrote this checkpoint (null for the input): what an edit of it writes as. */
  writer: string | null;
}

const idOf = (state: ThreadState) => state.checkpoint.checkpoint_id;
const parentOf = (state: ThreadState) => state.parent_checkpoint?.checkpoint_id ?? null;

/** LangGraph's checkpoint before the input is applied: an engine internal. */
function internal(state: ThreadState): boolean {
  return state.next.includes("__start__") || (state.metadata?.step as number | undefined) === -1;
}

/** `leaf`: nothing ran after it yet (an interrupt it holds is still waiting). */
function nameOf(state: ThreadState, parent: ThreadState | null, leaf: boolean): { label: string; writer: string | null } {
  const source = state.metadata?.source;
  // The nodes scheduled at the parent ran to make this checkpoint (unless it is an edit or a fork's copy).
  const wrote = parent && !internal(parent) ? parent.next.filter((node) => !node.startsWith("__")) : [];
  let label: string;
  let writer: string | null = wrote[0] ?? null;
  if (source === "update") {
    label = "edited state";
    writer = null;
  } else if (source === "fork") {
    // LangGraph copies the checkpoint a run was forked from: the branch starts here.
    label = "fork";
  } else if (wrote.length === 0) label = "input";
  else label = `after ${wrote.join(", ")}`;
  const waiting = state.tasks.filter((task) => task.interrupts.length > 0).map((task) => task.name);
  if (waiting.length > 0 && leaf) label += ` · waiting at ${waiting.join(", ")}`;
  else if (state.next.length === 0) label += " · end";
  return { label, writer };
}

/** Rows in reading order (oldest first): each branch right below the checkpoint it forks from. */
export function checkpointRows(history: ThreadState[]): CheckpointRow[] {
  const byId = new Map(history.map((state) => [idOf(state), state]));
  const visibleParent = (state: ThreadState): ThreadState | null => {
    let parent = byId.get(parentOf(state) ?? "") ?? null;
    while (parent && internal(parent)) parent = byId.get(parentOf(parent) ?? "") ?? null;
    return parent;
  };
  const children = new Map<string | null, ThreadState[]>();
  for (const state of history) {
    if (internal(state)) continue;
    const parent = visibleParent(state);
    const key = parent ? idOf(parent) : null;
    children.set(key, [...(children.get(key) ?? []), state]);
  }
  for (const list of children.values()) list.sort((a, b) => (a.created_at ?? "").localeCompare(b.created_at ?? ""));
  const rows: CheckpointRow[] = [];
  const walk = (state: ThreadState, depth: number, branch: boolean) => {
    // Iterative along the main line, recursive for branches: histories are long, forks few.
    let current: ThreadState | undefined = state;
    let isBranch = branch;
    while (current) {
      const kids: ThreadState[] = children.get(idOf(current)) ?? [];
      const { label, writer } = nameOf(current, byId.get(parentOf(current) ?? "") ?? null, kids.length === 0);
      rows.push({ id: idOf(current), state: current, label, depth, branch: isBranch, fork: kids.length > 1, writer });
      for (const other of kids.slice(1)) walk(other, depth + 1, true);
      current = kids[0];
      isBranch = false;
    }
  };
  for (const [i, root] of (children.get(null) ?? []).entries()) walk(root, i === 0 ? 0 : 1, i > 0);
  return rows;
}
