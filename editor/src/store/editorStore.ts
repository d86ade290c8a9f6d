/**
 * The editor's state (zustand) with undo/redo over the YAML text (zundo).
 *
 * The YAML text is the source of truth. The graph model is derived from it on
 * every change; while the text does not parse, the last good model stays on
 * the canvas and the parse problems are shown. Positions, selection, server
 * issues and run decorations live beside it but are not part of undo (only
 * `yaml` is tracked), and positions never touch the YAML. Nothing here is
 * written to the server: drafts.ts keeps unsaved work in the browser, and Save
 * sends the text with its layout.
 */
import { create } from "zustand";
import { temporal } from "zundo";
import type { Document } from "yaml";
import { applyEdit, renameNode } from "../spec/edit";
import type { XY } from "../spec/layout";
import { EMPTY_MODEL, parseSpec, type GraphModel, type ParseProblem } from "../spec/model";
import type { SpecIssue } from "../api/errors";

/**
 * A node's state in the run shown; `skipped`: the run ended without reaching it; `stopped`: it
 * was running when the run was stopped (cancelled), so it neither finished nor failed.
 */
export type NodeRunStatus = "pending" | "running" | "done" | "failed" | "waiting" | "skipped" | "stopped";
export type NodeDiffMark = "added" | "changed" | "removed";

export interface EditorState {
  /** The graph and version opened. */
  graphName: string | null;
  version: string | null;
  /** A graph made with "New graph": only a draft in the browser until its first Save. */
  isNew: boolean;
  /** When the unsaved edits shown were restored from the browser's draft (null: not restored). */
  restoredAt: number | null;
  /** The confirmation of the last Save, shown until the text changes (null: none). */
  savedNotice: { name: string; version: string; note: string | null; layoutSaved: boolean } | null;
  setSavedNotice: (notice: EditorState["savedNotice"]) => void;
  /** The text as loaded: what Save diffs against. */
  baseYaml: string;
  /** The YAML text: the source of truth. */
  yaml: string;
  /** Derived from `yaml` (the last good one while it does not parse). */
  model: GraphModel;
  /** The text the last derivation ran on (equals `yaml` once derived). */
  derivedYaml: string;
  parseProblems: ParseProblem[];
  /** Node positions on the canvas (sidecar layout file, never in the YAML). */
  positions: Record<string, XY>;
  /** Bumped to ask the canvas for a full elk layout. */
  layoutRequest: number;
  selectedNodes: string[];
  selectedEdges: string[];
  /** Issues from `POST /graphs/validate` for the current text. */
  serverIssues: SpecIssue[];
  /** Ask the YAML editor to put its cursor on a line (seq makes repeats distinct). */
  cursorRequest: { line: number; column: number; seq: number } | null;
  /**
   * Marks other views put on the canvas, as plain data: each node card selects
   * its own by id (canvas/nodes), so a run's progress re-renders only the
   * cards it changes and never rebuilds the canvas's nodes.
   */
  nodeStatus: Record<string, NodeRunStatus>;
  nodeDiff: Record<string, NodeDiffMark>;
  /** Version diff marks of the canvas's edges (by edge id). */
  edgeDiff: Record<string, NodeDiffMark>;
  /** The one line a running node's card shows: the tail of the tokens its model is streaming. */
  nodeRunLine: Record<string, string>;
  /** Ids of the edges (as the model gives them) the run shown went along; empty: no run shown. */
  takenEdges: string[];
  /** How many times each node ran in the run shown (the card shows "×n" above 1). */
  nodeVisits: Record<string, number>;

  /**
   * Open a graph: replaces text, positions and clears undo history. With a
   * draft restored, `yaml`/`positions` are the draft's and `baseYaml` the text
   * it started from (the editor then shows unsaved changes).
   */
  load: (graph: {
    name: string | null;
    version: string | null;
    yaml: string;
    positions?: Record<string, XY>;
    baseYaml?: string;
    isNew?: boolean;
    restoredAt?: number | null;
    layoutChanged?: boolean;
  }) => void;
  /** Replace the text (typing in the YAML editor coalesces into one undo step per burst). */
  setYaml: (text: string, options?: { typing?: boolean }) => void;
  /** Apply a canvas edit through the Document API; returns its result (undefined when the text does not parse). */
  edit: <T>(fn: (doc: Document) => T) => T | undefined;
  /** Rename a node (edges, references, position and selection follow); returns why not, or null. */
  rename: (from: string, to: string) => string | null;
  /** Set node positions; `automatic` ones (placement of unplaced nodes) are not saved to the layout file. */
  setPositions: (positions: Record<string, XY>, replace?: boolean, automatic?: boolean) => void;
  /** Counts position changes a person made (drag, add, paste, Auto layout). */
  layoutEdits: number;
  /** `layoutEdits` when the layout was last saved or loaded: more means Save has a layout to write. */
  savedLayoutEdits: number;
  dismissRestored: () => void;
  requestLayout: () => void;
  select: (nodes: string[], edges?: string[]) => void;
  setServerIssues: (issues: SpecIssue[]) => void;
  revealLine: (line: number, column?: number) => void;
  /** Mark the current text and layout as saved (the new base for diffs) under a version. */
  markSaved: (version: string) => void;
  setNodeStatus: (status: Record<string, NodeRunStatus>) => void;
  setNodeDiff: (diff: Record<string, NodeDiffMark>, edges?: Record<string, NodeDiffMark>) => void;
  setNodeRunLine: (lines: Record<string, string>) => void;
  setTakenEdges: (ids: string[]) => void;
  setNodeVisits: (visits: Record<string, number>) => void;
}

/** Typing within this many ms of the last recorded change joins its undo step. */
const TYPING_GROUP_MS = 600;
let typingBurst = false;
let lastRecordedAt = 0;
let lastWasTyping = false;

function derive(yaml: string, previous: GraphModel): Pick<EditorState, "model" | "derivedYaml" | "parseProblems"> {
  const parsed = parseSpec(yaml);
  return { model: parsed.model ?? previous, derivedYaml: yaml, parseProblems: parsed.problems };
}

/**
 * Positions after a change of the text: a node whose key was retyped in the
 * YAML (one id gone, one new, at the same place in `spec.nodes`) keeps its
 * position instead of being placed anew.
 */
function keptPositions(before: GraphModel, after: GraphModel, positions: Record<string, XY>): Record<string, XY> {
  if (before === after || before.nodes.length !== after.nodes.length) return positions;
  const now = new Set(after.nodes.map((n) => n.id));
  const was = new Set(before.nodes.map((n) => n.id));
  const gone = before.nodes.findIndex((n) => !now.has(n.id));
  if (gone < 0 || before.nodes.filter((n) => !now.has(n.id)).length !== 1) return positions;
  const renamed = after.nodes[gone];
  if (was.has(renamed.id) || !positions[before.nodes[gone].id] || positions[renamed.id]) return positions;
  return { ...positions, [renamed.id]: positions[before.nodes[gone].id] };
}

export const useEditorStore = create<EditorState>()(
  temporal(
    (set, get) => ({
      graphName: null,
      version: null,
      isNew: false,
      restoredAt: null,
      savedNotice: null,
      baseYaml: "",
      yaml: "",
      model: EMPTY_MODEL,
      derivedYaml: "",
      parseProblems: [],
      positions: {},
      layoutRequest: 0,
      selectedNodes: [],
      selectedEdges: [],
      serverIssues: [],
      cursorRequest: null,
      nodeStatus: {},
      nodeDiff: {},
      edgeDiff: {},
      nodeRunLine: {},
      takenEdges: [],
      nodeVisits: {},
      layoutEdits: 0,
      savedLayoutEdits: 0,

      load: ({ name, version, yaml, positions, baseYaml, isNew = false, restoredAt = null, layoutChanged = false }) => {
        const temporalApi = useEditorStore.temporal.getState();
        temporalApi.pause();
        const edits = get().layoutEdits;
        set({
          graphName: name,
          version,
          isNew,
          restoredAt,
          savedNotice: null,
          baseYaml: baseYaml ?? yaml,
          savedLayoutEdits: layoutChanged ? edits - 1 : edits,
          yaml,
          ...derive(yaml, EMPTY_MODEL),
          positions: positions ?? {},
          selectedNodes: [],
          selectedEdges: [],
          serverIssues: [],
          nodeStatus: {},
          nodeDiff: {},
          edgeDiff: {},
          nodeRunLine: {},
          takenEdges: [],
          nodeVisits: {},
        });
        temporalApi.resume();
        temporalApi.clear();
      },
      setYaml: (text, options) => {
        if (text === get().yaml) return;
        typingBurst = options?.typing ?? false;
        const previous = get().model;
        const derived = derive(text, previous);
        set({ yaml: text, savedNotice: null, ...derived, positions: keptPositions(previous, derived.model, get().positions) });
        typingBurst = false;
      },
      edit: (fn) => {
        let out;
        try {
          out = applyEdit(get().yaml, fn);
        } catch {
          return undefined;
        }
        get().setYaml(out.text);
        return out.result;
      },
      rename: (from, to) => {
        let out;
        try {
          out = applyEdit(get().yaml, (doc) => renameNode(doc, from, to));
        } catch (e) {
          return e instanceof Error ? e.message : String(e);
        }
        const { [from]: at, ...positions } = get().positions;
        set({
          positions: at ? { ...positions, [to]: at } : positions,
          selectedNodes: get().selectedNodes.map((id) => (id === from ? to : id)),
        });
        get().setYaml(out.text);
        return null;
      },
      setPositions: (positions, replace = false, automatic = false) =>
        set({
          positions: replace ? positions : { ...get().positions, ...positions },
          layoutEdits: automatic ? get().layoutEdits : get().layoutEdits + 1,
        }),
      requestLayout: () => set({ layoutRequest: get().layoutRequest + 1 }),
      select: (nodes, edges = []) => set({ selectedNodes: nodes, selectedEdges: edges }),
      setServerIssues: (issues) => set({ serverIssues: issues }),
      revealLine: (line, column = 1) => set({ cursorRequest: { line, column, seq: (get().cursorRequest?.seq ?? 0) + 1 } }),
      markSaved: (version) => set({ version, baseYaml: get().yaml, isNew: false, restoredAt: null, savedLayoutEdits: get().layoutEdits }),
      dismissRestored: () => set({ restoredAt: null }),
      setSavedNotice: (savedNotice) => set({ savedNotice }),
      setNodeStatus: (nodeStatus) => set({ nodeStatus }),
      setNodeDiff: (nodeDiff, edgeDiff = {}) => set({ nodeDiff, edgeDiff }),
      setNodeRunLine: (nodeRunLine) => set({ nodeRunLine }),
      setTakenEdges: (takenEdges) => set({ takenEdges }),
      setNodeVisits: (nodeVisits) => set({ nodeVisits }),
    }),
    {
      partialize: (state) => ({ yaml: state.yaml }),
      equality: (past, current) => past.yaml === current.yaml,
      limit: 200,
      handleSet: (handleSet) => (pastState, replace, currentState, delta) => {
        const now = Date.now();
        // A typing burst is one undo step: only its first keystroke records.
        const coalesce = typingBurst && lastWasTyping && now - lastRecordedAt < TYPING_GROUP_MS;
        lastRecordedAt = now;
        lastWasTyping = typingBurst;
        if (coalesce) return;
        // zundo passes its internal 4-argument setter here (its type says setState).
        (handleSet as unknown as (...args: unknown[]) => void)(pastState, replace, currentState, delta);
      },
    },
  ),
);

// Undo/redo restore only `yaml`: re-derive the model when the text changed
// without a derivation (this set leaves `yaml` alone, so undo ignores it).
useEditorStore.subscribe((state) => {
  if (state.yaml !== state.derivedYaml) useEditorStore.setState(derive(state.yaml, state.model));
});

/** Whether there is anything Save would store: text or layout changed, or a graph never saved. */
export const isDirty = (s: Pick<EditorState, "yaml" | "baseYaml" | "isNew" | "layoutEdits" | "savedLayoutEdits">): boolean =>
  s.isNew || s.yaml !== s.baseYaml || s.layoutEdits !== s.savedLayoutEdits;

export const undo = () => useEditorStore.temporal.getState().undo();
export const redo = () => useEditorStore.temporal.getState().redo();
