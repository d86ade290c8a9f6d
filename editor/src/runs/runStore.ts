/**
 * The live run shown on the canvas: per-node status, streamed tokens, the
 * state after each step, and the approvals a waiting node holds.
 *
 * RunPanel feeds SSE messages in through `apply`; useCanvasRunBridge mirrors
 * node status, visits, taken edges and each running node's line of tokens
 * into the editor store, which the canvas's node cards draw.
 */

import { create } from "zustand";
import type { SseMessage } from "../api/sse";
import type { NodeRunStatus } from "../store/editorStore";
import { soon } from "./format";
import type { ShownState } from "./runStates";
import { addEvent, addNote, EMPTY_TIMELINE, nextRun, waitingShort, type Timeline, type TimelineNote } from "./timeline";

export type { NodeRunStatus };

/**
 * Where the shown run is, as the stream tells it. `reading`: a run that already exists (a past
 * run, a thread in the URL) is being read, and nothing of it is shown yet; `starting`: a new run
 * is being created.
 */
export type RunPhase = "idle" | "reading" | "starting" | "running" | "waiting" | "success" | "error";

/** What an approval interrupt carries (engine/compiler/nodes/approval.py). */
export interface ApprovalRequest {
  interruptId: string | null;
  node: string;
  action: string | null;
  arguments: unknown;
  reason: string | null;
  expiresAt: string | null;
  onExpire: string | null;
  budgetUsed: unknown;
  /** Filled once the server's approval record is found (GET /approvals). */
  approvalId: string | null;
}

export interface StepValues {
  /** 1-based index of the state in the shown runs. */
  step: number;
  /** The nodes whose updates came just before these values (none: the input). */
  after: string[];
  values: Record<string, unknown>;
}

export interface LogLine {
  event: string;
  summary: string;
}

/** The shown run's data (runController's openThread builds a past run's before showing it at once). */
export interface RunView {
  threadId: string | null;
  /** The assistant (graph@version) the run uses; resumes and forks use it too. */
  assistantId: string | null;
  runId: string | null;
  phase: RunPhase;
  error: string | null;
  nodeStatus: Record<string, NodeRunStatus>;
  tokens: Record<string, string>;
  steps: StepValues[];
  approvals: Record<string, ApprovalRequest>;
  /** `wait` nodes parked on their durable timer: node -> the ISO time it waits until. */
  timers: Record<string, string>;
  /** Nodes parked on an MCP task (the server's poller resumes them): node -> `server/tool`. */
  tools: Record<string, string>;
  log: LogLine[];
  /** The run's story: a step per node execution, notes for the run as a whole. */
  timeline: Timeline;
  /** Nodes whose updates came since the last `values` event (they label the next state). */
  updatedSince: string[];
  /**
   * Plait's state of the shown run once it ended (the server's: partially succeeded, waiting
   * for a tool...), read from its row; or `failed` when the editor could not start or follow it.
   */
  ended: ShownState | null;
  /** The run's stream broke before its end (the network, a server restart): the editor rejoins it. */
  lost: boolean;
  /**
   * The thread's state once the run ended or parked, from its newest checkpoint (its private
   * channels left out): what the outcome shows, whatever the run's stream carried.
   */
  values: Record<string, unknown> | null;
}

interface RunState extends RunView {
  /** A thread another view (the approvals page) asked RunPanel to open. */
  openRequest: { graph: string; threadId: string } | null;
  /** Start showing a run of `nodes` on `threadId` (null: not created yet), every node pending. */
  begin(threadId: string | null, assistantId: string, nodes: string[]): void;
  /** Show that the runs of `threadId` are being read (runController's openThread shows them once read). */
  read(threadId: string, assistantId: string): void;
  /** A new run of the same thread (a resume or a fork): keep finished nodes, clear approvals. */
  continueWith(runId: string | null): void;
  /** Fold a stream message in (`at`: when it was written or received, for the timeline). */
  apply(message: SseMessage & { at?: string | null }): void;
  /** Fold a recorded journal in at once (one update for the views, however long the run). */
  applyAll(messages: (SseMessage & { at?: string | null })[]): void;
  setApprovalId(node: string, approvalId: string): void;
  /** Add a note the stream does not carry (who decided an approval, and when). */
  note(note: Omit<TimelineNote, "kind" | "key" | "run">): void;
  fail(message: string): void;
  reset(): void;
  requestOpen(graph: string, threadId: string): void;
  /** Forget the open request once its thread is shown (only if it is still that one). */
  clearOpenRequest(threadId: string): void;
}

const empty: RunView = {
  threadId: null,
  assistantId: null,
  runId: null,
  phase: "idle",
  error: null,
  nodeStatus: {},
  tokens: {},
  steps: [],
  approvals: {},
  timers: {},
  tools: {},
  log: [],
  timeline: EMPTY_TIMELINE,
  updatedSince: [],
  ended: null,
  lost: false,
  values: null,
};

/** A run of `nodes` on `threadId` shown from its start, every node pending. */
export function freshView(threadId: string | null, assistantId: string, nodes: string[], phase: RunPhase): RunView {
  return { ...empty, threadId, assistantId, phase, nodeStatus: Object.fromEntries(nodes.map((node) => [node, "pending" as NodeRunStatus])) };
}

/** A new run of the same thread (a resume or a fork): finished nodes stay, approvals and waits go. */
export function nextRunView<T extends Snapshot & { ended: ShownState | null; lost: boolean; values: Record<string, unknown> | null }>(
  state: T,
  runId: string | null,
): T {
  const nodeStatus = { ...state.nodeStatus };
  for (const [node, status] of Object.entries(nodeStatus)) if (status === "waiting") nodeStatus[node] = "running";
  return {
    ...state,
    runId,
    phase: "running",
    error: null,
    approvals: {},
    timers: {},
    tools: {},
    nodeStatus,
    timeline: nextRun(state.timeline),
    updatedSince: [],
    ended: null,
    lost: false,
    values: null,
  };
}

/** Fold stream messages in, one after the other (pure). */
export function foldAll<T extends Snapshot>(state: T, messages: (SseMessage & { at?: string | null })[]): T {
  let folded = state;
  for (const message of messages) folded = { ...folded, ...reduce(folded, message) };
  return folded;
}

const LOG_LIMIT = 500;

export const useRunStore = create<RunState>()((set, get) => ({
  ...empty,
  openRequest: null,

  begin(threadId, assistantId, nodes) {
    set(freshView(threadId, assistantId, nodes, "starting"));
  },

  read(threadId, assistantId) {
    // No node status yet: the run's own are read next, and "pending" would say it never ran.
    set({ ...empty, threadId, assistantId, phase: "reading" });
  },

  continueWith(runId) {
    set((state) => nextRunView(state, runId));
  },

  apply(message) {
    set((state) => reduce(state, message));
  },

  applyAll(messages) {
    set((state) => foldAll(state, messages));
  },

  setApprovalId(node, approvalId) {
    const current = get().approvals[node];
    if (current && current.approvalId !== approvalId) set({ approvals: { ...get().approvals, [node]: { ...current, approvalId } } });
  },

  note(note) {
    set({ timeline: addNote(get().timeline, note) });
  },

  fail(message) {
    // No row will be read: the editor's own failure (to create or follow the run) is the end it shows.
    set({ phase: "error", error: message, ended: { state: "failed", label: "failed", tone: "bad" }, lost: false });
  },

  reset() {
    set(empty);
  },

  requestOpen(graph, threadId) {
    set({ openRequest: { graph, threadId } });
  },

  clearOpenRequest(threadId) {
    if (get().openRequest?.threadId === threadId) set({ openRequest: null });
  },
}));

type Snapshot = Pick<
  RunState,
  "runId" | "phase" | "error" | "nodeStatus" | "tokens" | "steps" | "approvals" | "timers" | "tools" | "log" | "timeline" | "updatedSince"
>;

/** Fold one stream message into the run state (pure; exported for tests). */
export function reduce(state: Snapshot, message: SseMessage & { at?: string | null }): Partial<Snapshot> {
  const timeline = addEvent(state.timeline, message);
  return { ...reduceStatus(state, message), timeline };
}

function reduceStatus(state: Snapshot, message: SseMessage): Partial<Snapshot> {
  // Subgraph events arrive as `mode|ns`; the parent's nodes are what the canvas shows.
  const [mode, namespace] = message.event.split("|");
  const data = message.data as Record<string, unknown> | unknown[] | null;
  const log = [...state.log.slice(-(LOG_LIMIT - 1)), { event: message.event, summary: summarize(data) }];
  if (namespace) return { log };
  switch (mode) {
    case "metadata": {
      const runId = (data as { run_id?: string } | null)?.run_id ?? state.runId;
      return { runId, phase: state.phase === "starting" ? "running" : state.phase, log };
    }
    case "tasks":
      return { ...taskEvent(state, data as Record<string, unknown>), log };
    case "debug": {
      // Task start and result with timestamps; the timeline reads those, the status is the same as `tasks`.
      const debug = data as { type?: string; payload?: Record<string, unknown> } | null;
      if (debug?.type === "task" || debug?.type === "task_result") return { ...taskEvent(state, debug.payload ?? null), log };
      return { log };
    }
    case "updates": {
      const nodes = Object.keys((data as Record<string, unknown> | null) ?? {}).filter((key) => !key.startsWith("__"));
      return { ...updatesEvent(state, data as Record<string, unknown>), updatedSince: [...state.updatedSince, ...nodes], log };
    }
    case "messages":
      return { ...tokenEvent(state, data as unknown[]), log: state.log };
    case "values": {
      if (!data || Array.isArray(data) || typeof data !== "object") return { log };
      const values = { ...(data as Record<string, unknown>) };
      // Runs streaming only `values` learn of interrupts here.
      const parked = "__interrupt__" in values ? updatesEvent(state, { __interrupt__: values.__interrupt__ }) : {};
      delete values.__interrupt__;
      // A state no node wrote is not a step: the interrupt's repeat of the state, or
      // the state a resume starts from. Only the very first one is (the input). A run that
      // streams `values` alone names no node for any step: there a changed state is the
      // next step all the same, and only the last step's state again is not.
      const last = state.steps[state.steps.length - 1];
      const named = state.steps.some((step) => step.after.length > 0);
      const repeat = last !== undefined && (named || JSON.stringify(last.values) === JSON.stringify(values));
      if (state.updatedSince.length === 0 && repeat) return { ...parked, log };
      const after = [...new Set(state.updatedSince)];
      return { ...parked, steps: [...state.steps, { step: state.steps.length + 1, after, values }], updatedSince: [], log };
    }
    case "error": {
      const detail = data as { error?: string; message?: string } | string | null;
      const text = typeof detail === "string" ? detail : [detail?.error, detail?.message].filter(Boolean).join(": ") || "run failed";
      const nodeStatus = { ...state.nodeStatus };
      for (const [node, status] of Object.entries(nodeStatus)) if (status === "running") nodeStatus[node] = "failed";
      return { phase: "error", error: text, nodeStatus, log };
    }
    case "end": {
      if (state.phase === "error") return { log };
      const parked = Object.keys(state.approvals).length + Object.keys(state.timers).length + Object.keys(state.tools).length > 0;
      return { phase: parked ? "waiting" : "success", log };
    }
    default:
      return { log };
  }
}

function taskEvent(state: Snapshot, data: Record<string, unknown> | null): Partial<Snapshot> {
  const name = typeof data?.name === "string" ? data.name : null;
  if (!name || name.startsWith("__")) return {};
  const nodeStatus = { ...state.nodeStatus };
  if ("input" in (data ?? {}) && !("result" in (data ?? {})) && !("error" in (data ?? {}))) {
    nodeStatus[name] = "running";
    // A node that runs again (a loop) streams fresh tokens.
    return { nodeStatus, tokens: { ...state.tokens, [name]: "" } };
  }
  const interrupts = Array.isArray(data?.interrupts) ? data.interrupts : [];
  if (data?.error) nodeStatus[name] = "failed";
  else if (interrupts.length > 0) nodeStatus[name] = "waiting";
  else nodeStatus[name] = "done";
  return { nodeStatus };
}

function updatesEvent(state: Snapshot, data: Record<string, unknown> | null): Partial<Snapshot> {
  if (!data || typeof data !== "object") return {};
  const nodeStatus = { ...state.nodeStatus };
  let approvals = state.approvals;
  let timers = state.timers;
  let tools = state.tools;
  let phase = state.phase;
  for (const [key, value] of Object.entries(data)) {
    if (key === "__interrupt__") {
      for (const item of Array.isArray(value) ? value : []) {
        const timer = timerWait(item as Record<string, unknown>);
        const tool = toolPark(item as Record<string, unknown>);
        const request = approvalRequest(item as Record<string, unknown>);
        if (timer) {
          timers = { ...timers, [timer.node]: timer.until };
          nodeStatus[timer.node] = "waiting";
          phase = "waiting";
        } else if (tool) {
          tools = { ...tools, [tool.node]: tool.tool };
          nodeStatus[tool.node] = "waiting";
          phase = "waiting";
        } else if (request) {
          approvals = { ...approvals, [request.node]: request };
          nodeStatus[request.node] = "waiting";
          phase = "waiting";
        }
      }
    } else if (!key.startsWith("__") && nodeStatus[key] !== "failed") {
      nodeStatus[key] = "done";
    }
  }
  return { nodeStatus, approvals, timers, tools, phase };
}

/** The `wait` node and its time an interrupt (`{id, value}`) parks on (engine/compiler/nodes/wait.py), or null. */
export function timerWait(item: Record<string, unknown>): { node: string; until: string } | null {
  const value = item.value as Record<string, unknown> | null;
  if (!value || typeof value !== "object" || value.kind !== "wait") return null;
  return typeof value.node === "string" && typeof value.until === "string" ? { node: value.node, until: value.until } : null;
}

/**
 * The node and `server/tool` of an interrupt (`{id, value}`) that parks a run on an MCP task
 * (engine/tools/mcp/tool.py; `server/tool` as the server's `waiting_for_tool` label says it), or null.
 */
export function toolPark(item: Record<string, unknown>): { node: string; tool: string } | null {
  const value = item.value as Record<string, unknown> | null;
  if (!value || typeof value !== "object" || value.plait !== "mcp_task" || typeof value.node !== "string") return null;
  return { node: value.node, tool: typeof value.server === "string" && value.server ? `${value.server}/${String(value.tool)}` : String(value.tool) };
}

/** The approval an interrupt (`{id, value}`) asks for, or null for other interrupts. */
export function approvalRequest(item: Record<string, unknown>): ApprovalRequest | null {
  const value = item.value as Record<string, unknown> | null;
  // A `wait` node's interrupt asks nobody: its timer resumes it (timerWait); nor does an
  // MCP task's park: the server's poller resumes it when the task ends (toolPark).
  if (!value || typeof value !== "object" || typeof value.node !== "string" || value.kind === "wait" || value.plait === "mcp_task") return null;
  return {
    interruptId: typeof item.id === "string" ? item.id : typeof item.interrupt_id === "string" ? item.interrupt_id : null,
    node: value.node,
    action: (value.action as string | null) ?? null,
    arguments: value.arguments ?? null,
    reason: (value.reason as string | null) ?? null,
    expiresAt: (value.expires_at as string | null) ?? null,
    onExpire: (value.on_expire as string | null) ?? null,
    budgetUsed: value.budget_used ?? value.budget ?? null,
    approvalId: null,
  };
}

function tokenEvent(state: Snapshot, data: unknown[] | null): Partial<Snapshot> {
  if (!Array.isArray(data) || data.length < 2) return {};
  const [chunk, metadata] = data as [Record<string, unknown> | null, Record<string, unknown> | null];
  const node = metadata?.langgraph_node;
  if (typeof node !== "string") return {};
  const text = messageText(chunk?.content);
  if (!text) return {};
  return { tokens: { ...state.tokens, [node]: (state.tokens[node] ?? "") + text } };
}

/** The text of a message's content (a string, or a list of content blocks). */
export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((block) => (typeof block === "string" ? block : typeof block?.text === "string" ? block.text : "")).join("");
  return "";
}

function summarize(data: unknown): string {
  if (data === null || data === undefined) return "";
  const text = typeof data === "string" ? data : JSON.stringify(data);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/** Node statuses as the canvas shows them: once a run has ended, a node it never reached reads "skipped". */
export function shownStatus(status: Record<string, NodeRunStatus>, phase: RunPhase): Record<string, NodeRunStatus> {
  if (phase !== "success" && phase !== "error") return status;
  return Object.fromEntries(Object.entries(status).map(([node, s]) => [node, s === "pending" ? "skipped" : s]));
}

/** Characters of streamed text a card shows (one line; the run panel's node inspector has it all). */
const TOKEN_TAIL = 48;

/**
 * The line each running node's card shows after its status word: what a tool call of it waits
 * for (a tool's `limits`), else the tail of the tokens its model is streaming, whitespace folded
 * to spaces; a `wait` node parked on its timer says until when, in the viewer's local time
 * (`WAITING until 14:40:56`), and a node parked on an MCP task which tool it waits for
 * (`WAITING for demo/slow_report`), whole: the card wraps it. A map that ended having lost
 * items says how many (`DONE 2 of 5 items lost`).
 */
export function runLines(
  tokens: Record<string, string>,
  status: Record<string, NodeRunStatus>,
  waiting: Record<string, string> = {},
  timers: Record<string, string> = {},
  tools: Record<string, string> = {},
  losses: Record<string, string> = {},
): Record<string, string> {
  const lines: Record<string, string> = {};
  for (const [node, text] of Object.entries(losses)) if (status[node] === "done") lines[node] = text;
  for (const [node, text] of Object.entries(tokens))
    if (text && status[node] === "running") lines[node] = (text.length > TOKEN_TAIL ? `…${text.slice(-TOKEN_TAIL)}` : text).replace(/\s+/g, " ");
  for (const [node, text] of Object.entries(waiting)) if (status[node] === "running") lines[node] = text;
  for (const [node, until] of Object.entries(timers)) if (status[node] === "waiting") lines[node] = `until ${soon(until)}`;
  for (const [node, tool] of Object.entries(tools)) if (status[node] === "waiting") lines[node] = `for ${tool}`;
  return lines;
}

/** What each map node's latest step lost, by node (`2 of 5 items lost`): only maps that lost items. */
export function lossLines(timeline: Timeline): Record<string, string> {
  const losses: Record<string, string> = {};
  for (const entry of timeline.entries) {
    if (entry.kind !== "step") continue;
    const map = entry.map;
    // Every item reports once, succeeded or failed (timeline.ts `mapTotal`).
    if (map && map.failed > 0) losses[entry.node] = `${map.failed} of ${map.done + map.failed} items lost`;
    else delete losses[entry.node];
  }
  return losses;
}

/** What each node's latest step waits for under a tool's limits, by node, in a few words. */
export function waitingLines(timeline: Timeline): Record<string, string> {
  const waiting: Record<string, string> = {};
  for (const entry of timeline.entries) {
    if (entry.kind !== "step") continue;
    if (entry.waiting) waiting[entry.node] = waitingShort(entry.waiting);
    else delete waiting[entry.node];
  }
  return waiting;
}
