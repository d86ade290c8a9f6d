/**
 * Unsaved edits kept in the browser (localStorage), one draft per graph and
 * version, so a reload or a crashed tab loses nothing: the editor writes the
 * draft a moment after each change and removes it when the text and layout are
 * saved (or put back as they were). A graph made with "New graph" exists only
 * as a draft until its first Save.
 */
import type { XY } from "../spec/layout";

export interface Draft {
  graph: string;
  version: string;
  /** The edited text and positions. */
  yaml: string;
  positions: Record<string, XY>;
  /** The text the edits started from (a new graph's template). */
  baseYaml: string;
  /** Not on the server yet: made by "New graph", created by its first Save. */
  isNew: boolean;
  /** When it was last written (ms since the epoch). */
  savedAt: number;
}

const PREFIX = "plait.draft.v1:";

const keyOf = (graph: string, version: string) => `${PREFIX}${graph}@${version}`;

function storage(): Storage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null; // storage disabled (private mode settings): drafts are not kept
  }
}

/** The draft of `graph@version`, if one is kept. */
export function readDraft(graph: string, version: string): Draft | null {
  const raw = storage()?.getItem(keyOf(graph, version));
  if (!raw) return null;
  try {
    const draft = JSON.parse(raw) as Draft;
    return typeof draft.yaml === "string" && typeof draft.baseYaml === "string" ? { ...draft, positions: draft.positions ?? {} } : null;
  } catch {
    return null;
  }
}

/** Keep a draft; returns false when the browser refused (storage full or off). */
export function writeDraft(draft: Omit<Draft, "savedAt">): boolean {
  const store = storage();
  if (!store) return false;
  try {
    store.setItem(keyOf(draft.graph, draft.version), JSON.stringify({ ...draft, savedAt: Date.now() }));
    return true;
  } catch {
    return false;
  }
}

export function removeDraft(graph: string, version: string): void {
  storage()?.removeItem(keyOf(graph, version));
}

/** Every kept draft of graphs not saved yet (for the Graphs page). */
export function newGraphDrafts(): Draft[] {
  const store = storage();
  if (!store) return [];
  const found: Draft[] = [];
  for (let i = 0; i < store.length; i++) {
    const key = store.key(i);
    if (!key?.startsWith(PREFIX)) continue;
    const at = key.slice(PREFIX.length);
    const split = at.lastIndexOf("@");
    const draft = readDraft(at.slice(0, split), at.slice(split + 1));
    if (draft?.isNew) found.push(draft);
  }
  return found.sort((a, b) => a.graph.localeCompare(b.graph));
}
