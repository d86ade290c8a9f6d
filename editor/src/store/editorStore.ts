/**
 * The editor's state (zustand) with undo/redo over the YAML text (zundo).
 *
 * The YAML text is the source of truth. The graph model is derived from it on
 * every change; while the text does not parse, the last good model stays on
 * the canvas and the parse problems are shown. Positions, selection, server
 * issues and run decorations live beside it but are not part of undo (only
 * `yaml` is tracked), and positions never touch the YAML.
 */
import type { ReactNode } from "react";
import { create } from "zustand";
import { temporal } from "zundo";
import type { Document } from "yaml";
import { applyEdit } from "../spec/edit";
import type { XY } from "../spec/layout";
import { EMPTY_MODEL, parseSpec, type GraphModel, type ParseProblem } from "../spec/model";
import type { SpecIssue } from "../api/errors";

export type NodeRunStatus = "pending" | "running" | "done" | "failed" | "waiting";
export type NodeDiffMark = "added" | "changed" | "removed";

export interface EditorState {
  /** The graph and version opened (null for a new, unsaved graph). */
  graphName: string | null;
  version: string | null;
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
  /** Decorations other views put on nodes: run status, version diff marks, cards. */
  nodeStatus: Record<string, NodeRunStatus>;
  nodeDiff: Record<string, NodeDiffMark>;
  nodeExtra: Record<string, ReactNode>;

  /** Open a graph: replaces text, positions and clears undo history. */
  load: (graph: { name: string | null; version: string | null; yaml: string; positions?: Record<string, XY> }) => void;
  /** Replace the text (typing in the YAML editor coalesces into one undo step per burst). */
  setYaml: (text: string, options?: { typing?: boolean }) => void;
  /** Apply a canvas edit through the Document API; returns its result (undefined when the text does not parse). */
  edit: <T>(fn: (doc: Document) => T) => T | undefined;
  /** Set node positions; `automatic` ones (placement of unplaced nodes) are not saved to the layout file. */
  setPositions: (positions: Record<string, XY>, replace?: boolean, automatic?: boolean) => void;
  /** Counts position changes a person made (drag, add, paste, Auto layout): the layout file is saved on them. */
  layoutEdits: number;
  requestLayout: () => void;
  select: (nodes: string[], edges?: string[]) => void;
  setServerIssues: (issues: SpecIssue[]) => void;
  revealLine: (line: number, column?: number) => void;
  /** Mark the current text as saved (the new base for diffs) under a version. */
  markSaved: (version: string) => void;
  setNodeStatus: (status: Record<string, NodeRunStatus>) => void;
  setNodeDiff: (diff: Record<string, NodeDiffMark>) => void;
  setNodeExtra: (extra: Record<string, ReactNode>) => void;
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

export const useEditorStore = create<EditorState>()(
  temporal(
    (set, get) => ({
      graphName: null,
      version: null,
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
      nodeExtra: {},
      layoutEdits: 0,

      load: ({ name, version, yaml, positions }) => {
        const temporalApi = useEditorStore.temporal.getState();
        temporalApi.pause();
        set({
          graphName: name,
          version,
          baseYaml: yaml,
          yaml,
          ...derive(yaml, EMPTY_MODEL),
          positions: positions ?? {},
          selectedNodes: [],
          selectedEdges: [],
          serverIssues: [],
          nodeStatus: {},
          nodeDiff: {},
          nodeExtra: {},
        });
        temporalApi.resume();
        temporalApi.clear();
      },
      setYaml: (text, options) => {
        if (text === get().yaml) return;
        typingBurst = options?.typing ?? false;
        set({ yaml: text, ...derive(text, get().model) });
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
      setPositions: (positions, replace = false, automatic = false) =>
        set({
          positions: replace ? positions : { ...get().positions, ...positions },
          layoutEdits: automatic ? get().layoutEdits : get().layoutEdits + 1,
        }),
      requestLayout: () => set({ layoutRequest: get().layoutRequest + 1 }),
      select: (nodes, edges = []) => set({ selectedNodes: nodes, selectedEdges: edges }),
      setServerIssues: (issues) => set({ serverIssues: issues }),
      revealLine: (line, column = 1) => set({ cursorRequest: { line, column, seq: (get().cursorRequest?.seq ?? 0) + 1 } }),
      markSaved: (version) => set({ version, baseYaml: get().yaml }),
      setNodeStatus: (nodeStatus) => set({ nodeStatus }),
      setNodeDiff: (nodeDiff) => set({ nodeDiff }),
      setNodeExtra: (nodeExtra) => set({ nodeExtra }),
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

export const undo = () => useEditorStore.temporal.getState().undo();
export const redo = () => useEditorStore.temporal.getState().redo();
