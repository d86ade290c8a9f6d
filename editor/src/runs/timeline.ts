/**
 * The story of a run, folded from its stream events one at a time: a step per
 * node execution (start, duration, attempt, input, output, tokens, cost, tool
 * calls, retries, map items, interrupts) and notes for what happens to the
 * run as a whole (a takeover by another worker, errors, approvals, budgets).
 *
 * Start times and durations come from the `debug` mode's task events (they
 * carry timestamps); without them, from the journal's `at` (when the server
 * wrote the event). Tokens come from the `usage_metadata` of the messages a
 * node's model streamed; cost from the spec's budget events (only a spec
 * with `budgets` prices its model calls).
 */

import { soon } from "./format";

export interface ToolCall {
  tool: string;
  args: unknown;
  /** `unfinished`: its step ended without a result for it (cancelled, e.g. an item timeout). */
  status: "started" | "ok" | "error" | "unfinished";
  error: string | null;
  reused: boolean;
  /** What the tool returned (`ok` only); the beginning of it when `truncatedFrom` is set. */
  result?: unknown;
  /** The whole result's size in bytes, when the event carried only its beginning. */
  truncatedFrom?: number;
}

export interface Retry {
  target: string;
  attempt: number;
  errorClass: string;
  delay: number;
  error: string;
}

/** What a tool call waits for under its tool's `limits` (a `tool_waiting` event). */
export interface ToolWait {
  tool: string;
  /** `concurrency`, `rate` or `paused`. */
  reason: string;
  /** The declared limit that holds it: `{concurrency}` or `{rate, burst}`. */
  limit: Record<string, unknown>;
  /** Seconds until the next turn or the pause's end, when known. */
  retryIn: number | null;
}

export interface MapProgress {
  done: number;
  failed: number;
  /** Indexes of the items that failed. */
  failedItems: number[];
  /** The number of items, once the step ended (every item reports, succeeded or failed). */
  total: number | null;
}

/** `stopped`: still running when its run ended (a cancel, a time limit cut it off). */
export type StepStatus = "running" | "done" | "failed" | "waiting" | "stopped";

/** One execution of one node. */
export interface TimelineStep {
  kind: "step";
  key: string;
  node: string;
  /** LangGraph's superstep number (null when the stream did not say). */
  superstep: number | null;
  /** 1 for a node's first execution in the shown runs, 2 for its second (a loop), ... */
  visit: number;
  /** Index of the run (0: the first run of the thread, 1: its first resume, ...). */
  run: number;
  /** The run's attempt that executed it (> 1: another worker took the run over). */
  attempt: number;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  status: StepStatus;
  /** The state the node read (private channels left out). */
  input: unknown;
  /** The node's state writes. */
  output: unknown;
  error: string | null;
  tokensIn: number;
  tokensOut: number;
  /** Cost of the step's model calls, when the spec prices them (a budget). */
  cost: number | null;
  toolCalls: ToolCall[];
  retries: Retry[];
  /** What a tool call of the step waits for under the tool's `limits` (null: nothing now). */
  waiting: ToolWait | null;
  /** How many of the step's tool calls had to wait for their turn. */
  waits: number;
  map: MapProgress | null;
  /** What the node's interrupt asked (an approval request), when it parked. */
  interrupt: unknown;
  /** Streamed model text (kept here, not on the canvas card). */
  text: string;
}

export type NoteType = "attempt" | "error" | "approval" | "timer" | "tool" | "decision" | "budget" | "run" | "guard" | "route";

/** Something that happened to the run rather than inside one step. */
export interface TimelineNote {
  kind: "note";
  key: string;
  type: NoteType;
  text: string;
  at: string | null;
  run: number;
  node: string | null;
  data: unknown;
}

export type TimelineEntry = TimelineStep | TimelineNote;

export interface Timeline {
  entries: TimelineEntry[];
  /** Entry index of each step by its task id. */
  byTask: Record<string, number>;
  run: number;
  attempt: number;
  /** The run's cost so far as the last budget event said (budget events carry totals). */
  costSoFar: number;
  /** Executions per node. */
  visits: Record<string, number>;
  /** Events folded in (each counts, whether or not it changed an entry). */
  events: number;
}

/** A stream or journal event: name, data and, from the journal, when it was written. */
export interface RunEvent {
  event: string;
  data: unknown;
  at?: string | null;
}

export const EMPTY_TIMELINE: Timeline = { entries: [], byTask: {}, run: 0, attempt: 1, costSoFar: 0, visits: {}, events: 0 };

/** The timeline of a new run of the same thread (a resume or a fork): entries so far stay. */
export function nextRun(timeline: Timeline): Timeline {
  return { ...timeline, run: timeline.run + 1, attempt: 1, costSoFar: 0 };
}

/** A note the stream does not carry (e.g. who decided an approval, read from the approvals API). */
export function addNote(timeline: Timeline, note: Omit<TimelineNote, "kind" | "key" | "run">): Timeline {
  const entry: TimelineNote = { ...note, kind: "note", key: `n${timeline.entries.length}`, run: timeline.run };
  return { ...timeline, entries: [...timeline.entries, entry] };
}

type Data = Record<string, unknown>;

function isData(value: unknown): value is Data {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Fold one event into the timeline (pure). */
export function addEvent(timeline: Timeline, message: RunEvent): Timeline {
  const tl = { ...timeline, events: timeline.events + 1 };
  const [mode, namespace] = message.event.split("|");
  // Subgraph events (`mode|ns`) belong to the subgraph's own run: the parent step shows its outcome.
  if (namespace) return tl;
  const data = message.data;
  const at = message.at ?? null;
  switch (mode) {
    case "metadata": {
      const attempt = isData(data) && typeof data.attempt === "number" ? data.attempt : 1;
      if (attempt <= 1) return { ...tl, attempt };
      const text = `attempt ${attempt}: another worker took the run over (the previous one was lost)`;
      return addNote({ ...tl, attempt }, { type: "attempt", text, at, node: null, data });
    }
    case "debug":
      if (!isData(data) || !isData(data.payload)) return tl;
      if (data.type === "task") return startStep(tl, data.payload, numberOr(data.step), stringOr(data.timestamp) ?? at);
      if (data.type === "task_result") return finishStep(tl, data.payload, stringOr(data.timestamp) ?? at, typeof data.timestamp === "string");
      return tl;
    case "tasks":
      if (!isData(data)) return tl;
      if ("input" in data && !("result" in data) && !("error" in data)) return startStep(tl, data, null, at);
      return finishStep(tl, data, at, false);
    case "updates":
      return isData(data) ? updates(tl, data, at) : tl;
    case "messages":
      return Array.isArray(data) ? messageChunk(tl, data) : tl;
    case "custom":
      return isData(data) ? custom(tl, data, at) : tl;
    case "error": {
      const detail = isData(data) ? [data.error, data.message].filter(Boolean).join(": ") : String(data ?? "");
      const failed = mapSteps(tl, (step) => (step.status === "running" ? { ...step, status: "failed", error: step.error ?? detail } : step));
      return addNote(failed, { type: "error", text: detail || "the run failed", at, node: null, data });
    }
    case "end":
      // A step of this run still going when it ended was cut off (a cancel, a time limit): it ran until then.
      return mapSteps(tl, (step) =>
        step.status === "running" && step.run === tl.run
          ? {
              ...step,
              status: "stopped",
              endedAt: at,
              durationMs: between(step.startedAt, at),
              toolCalls: step.toolCalls.map((call) => (call.status === "started" ? { ...call, status: "unfinished" } : call)),
            }
          : step,
      );
    default:
      return tl;
  }
}

/**
 * What an interrupt's value waits for: a `wait` node parks on its durable timer, a call of an
 * MCP task tool on the task (its `server/tool`, as the server's label says it); anything else
 * (an approval, an MCP task's question) asks a person.
 */
export function interruptWait(value: unknown): { kind: "timer"; until: string } | { kind: "tool"; tool: string } | { kind: "person" } {
  if (isData(value) && value.kind === "wait" && typeof value.until === "string") return { kind: "timer", until: value.until };
  if (isData(value) && value.plait === "mcp_task")
    return { kind: "tool", tool: value.server ? `${String(value.server)}/${String(value.tool)}` : String(value.tool) };
  return { kind: "person" };
}

function numberOr(value: unknown): number | null {
  return typeof value === "number" ? value : null;
}

function stringOr(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** State without Plait's private channels (`__visits`, `__usage`, ...). */
export function publicState(value: unknown): unknown {
  if (!isData(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !key.startsWith("__")));
}

function startStep(tl: Timeline, task: Data, superstep: number | null, at: string | null): Timeline {
  const id = stringOr(task.id);
  const node = stringOr(task.name);
  if (!id || !node || node.startsWith("__")) return tl;
  const previous = lastStepOf(tl, node);
  const parked = previous >= 0 ? (tl.entries[previous] as TimelineStep) : null;
  if (parked && parked.status === "waiting" && parked.run < tl.run) {
    // A resume runs the parked node again: the same visit, now with its decision. It keeps
    // its first start: the step began when it first ran (a timer's wait is part of it), and
    // the timeline places it there, not where the resume re-entered it.
    // A call the park left started (an MCP task's) is called again by the re-run, which streams it anew.
    const resumed: TimelineStep = {
      ...parked,
      toolCalls: parked.toolCalls.filter((call) => call.status !== "started"),
      run: tl.run,
      status: "running",
      startedAt: parked.startedAt ?? at,
      endedAt: null,
      durationMs: null,
      output: null,
    };
    return { ...replace(tl, previous, resumed), byTask: { ...tl.byTask, [id]: previous } };
  }
  const known = tl.byTask[id];
  if (known !== undefined) {
    // The same task from a second mode (`tasks` and `debug`): keep what is known, add the time.
    const step = tl.entries[known] as TimelineStep;
    return replace(tl, known, { ...step, startedAt: step.startedAt ?? at, superstep: step.superstep ?? superstep });
  }
  const visit = (tl.visits[node] ?? 0) + 1;
  const step: TimelineStep = {
    kind: "step",
    key: `${tl.run}:${id}`,
    node,
    superstep,
    visit,
    run: tl.run,
    attempt: tl.attempt,
    startedAt: at,
    endedAt: null,
    durationMs: null,
    status: "running",
    input: publicState(task.input),
    output: null,
    error: null,
    tokensIn: 0,
    tokensOut: 0,
    cost: null,
    toolCalls: [],
    retries: [],
    waiting: null,
    waits: 0,
    map: null,
    interrupt: null,
    text: "",
  };
  return {
    ...tl,
    entries: [...tl.entries, step],
    byTask: { ...tl.byTask, [id]: tl.entries.length },
    visits: { ...tl.visits, [node]: visit },
  };
}

/** `exact`: `at` is the engine's own time of the result (debug mode), better than when an event was written. */
function finishStep(tl: Timeline, task: Data, at: string | null, exact: boolean): Timeline {
  const id = stringOr(task.id);
  const index = id ? tl.byTask[id] : undefined;
  if (index === undefined) return tl;
  const step = tl.entries[index] as TimelineStep;
  const interrupts = Array.isArray(task.interrupts) ? task.interrupts : [];
  const error = task.error ? String(task.error) : null;
  const endedAt = exact ? at : (step.endedAt ?? at);
  const finished: TimelineStep = {
    ...step,
    endedAt,
    durationMs: exact ? between(step.startedAt, endedAt) : (step.durationMs ?? between(step.startedAt, endedAt)),
    status: error ? "failed" : interrupts.length > 0 ? "waiting" : "done",
    error: error ?? step.error,
    output: step.output ?? publicState(task.result ?? null),
    interrupt: interrupts.length > 0 ? ((interrupts[0] as Data).value ?? interrupts[0]) : step.interrupt,
    map: step.map ? { ...step.map, total: mapTotal(step) } : null,
    // A step that parks leaves its calls going (an MCP task's runs on its server); one that ended cut them off.
    toolCalls: interrupts.length > 0 ? step.toolCalls : step.toolCalls.map((call) => (call.status === "started" ? { ...call, status: "unfinished" } : call)),
  };
  return replace(tl, index, finished);
}

function mapTotal(step: TimelineStep): number | null {
  // Every item reports once, succeeded or failed: when the step ends, that is all of them.
  return step.map ? step.map.done + step.map.failed : null;
}

function between(start: string | null, end: string | null): number | null {
  if (!start || !end) return null;
  const ms = Date.parse(end) - Date.parse(start);
  return Number.isFinite(ms) ? Math.max(0, ms) : null;
}

function updates(tl: Timeline, data: Data, at: string | null): Timeline {
  let next = tl;
  for (const [node, update] of Object.entries(data)) {
    if (node === "__interrupt__") {
      for (const item of Array.isArray(update) ? update : []) {
        const value = isData(item) ? item.value : null;
        const waiting = isData(value) && typeof value.node === "string" ? value.node : null;
        const action = isData(value) && typeof value.action === "string" ? value.action : "a decision";
        const index = waiting ? lastStepOf(next, waiting) : -1;
        if (index >= 0) next = replace(next, index, { ...(next.entries[index] as TimelineStep), status: "waiting", interrupt: value });
        const wait = interruptWait(value);
        if (wait.kind === "timer")
          // As the run line says it (a time of day, the date only when not today).
          next = addNote(next, { type: "timer", text: `${waiting ?? "a node"} waits until ${soon(wait.until)}`, at, node: waiting, data: value });
        else if (wait.kind === "tool")
          next = addNote(next, { type: "tool", text: `${waiting ?? "a node"} waits for ${wait.tool} (an MCP task)`, at, node: waiting, data: value });
        else next = addNote(next, { type: "approval", text: `${waiting ?? "a node"} waits for approval of ${action}`, at, node: waiting, data: value });
      }
      continue;
    }
    if (node.startsWith("__")) continue;
    const index = lastStepOf(next, node);
    const step = index >= 0 ? (next.entries[index] as TimelineStep) : null;
    if (step && (step.status === "running" || step.output === null)) {
      next = replace(next, index, { ...step, output: publicState(update), status: step.status === "failed" ? "failed" : "done", endedAt: step.endedAt ?? at });
      continue;
    }
    // A stream without task events: the update is all we learn of the step.
    const visit = (next.visits[node] ?? 0) + 1;
    const made: TimelineStep = {
      kind: "step",
      key: `${next.run}:u${next.entries.length}`,
      node,
      superstep: null,
      visit,
      run: next.run,
      attempt: next.attempt,
      startedAt: null,
      endedAt: at,
      durationMs: null,
      status: "done",
      input: null,
      output: publicState(update),
      error: null,
      tokensIn: 0,
      tokensOut: 0,
      cost: null,
      toolCalls: [],
      retries: [],
      waiting: null,
      waits: 0,
      map: null,
      interrupt: null,
      text: "",
    };
    next = { ...next, entries: [...next.entries, made], visits: { ...next.visits, [node]: visit } };
  }
  return next;
}

function messageChunk(tl: Timeline, data: unknown[]): Timeline {
  const [chunk, metadata] = data;
  if (!isData(chunk) || !isData(metadata) || typeof metadata.langgraph_node !== "string") return tl;
  const index = lastStepOf(tl, metadata.langgraph_node);
  if (index < 0) return tl;
  const step = tl.entries[index] as TimelineStep;
  const usage = isData(chunk.usage_metadata) ? chunk.usage_metadata : null;
  const text = typeof chunk.content === "string" ? chunk.content : "";
  if (!usage && !text) return tl;
  return replace(tl, index, {
    ...step,
    tokensIn: step.tokensIn + (usage ? Number(usage.input_tokens ?? 0) : 0),
    tokensOut: step.tokensOut + (usage ? Number(usage.output_tokens ?? 0) : 0),
    text: step.text + text,
  });
}

function custom(tl: Timeline, data: Data, at: string | null): Timeline {
  const node = stringOr(data.node);
  switch (data.plait) {
    case "tool_call": {
      const index = node ? lastStepOf(tl, node) : -1;
      if (index < 0) return tl;
      const step = tl.entries[index] as TimelineStep;
      const status = data.status === "ok" || data.status === "error" ? data.status : "started";
      const call: ToolCall = { tool: String(data.tool), args: data.args ?? null, status, error: stringOr(data.error), reused: Boolean(data.reused) };
      if ("result" in data) call.result = data.result;
      if (data.result_truncated === true && typeof data.result_bytes === "number") call.truncatedFrom = data.result_bytes;
      // Calls of one node may run in parallel (a map): the result is the started call with the same arguments.
      const args = JSON.stringify(call.args);
      const open =
        status === "started" ? -1 : findLastIndex(step.toolCalls, (c) => c.tool === call.tool && c.status === "started" && JSON.stringify(c.args) === args);
      const toolCalls = open >= 0 ? step.toolCalls.map((c, i) => (i === open ? call : c)) : [...step.toolCalls, call];
      // A call that ended no longer waits (it got its turn, or gave up).
      return replace(tl, index, { ...step, toolCalls, waiting: status === "started" ? step.waiting : null });
    }
    case "tool_waiting": {
      const index = node ? lastStepOf(tl, node) : -1;
      if (index < 0) return tl;
      const step = tl.entries[index] as TimelineStep;
      const waiting: ToolWait = {
        tool: String(data.tool),
        reason: String(data.reason),
        limit: isData(data.limit) ? data.limit : {},
        retryIn: typeof data.retry_in === "number" ? data.retry_in : null,
      };
      return replace(tl, index, { ...step, waiting, waits: step.waits + 1 });
    }
    case "retry": {
      const index = runningStep(tl);
      if (index < 0) return tl;
      const step = tl.entries[index] as TimelineStep;
      const retry: Retry = {
        target: String(data.target ?? step.node),
        attempt: Number(data.attempt ?? 0),
        errorClass: String(data.error_class ?? "error"),
        delay: Number(data.delay ?? 0),
        error: String(data.error ?? ""),
      };
      return replace(tl, index, { ...step, retries: [...step.retries, retry] });
    }
    case "map_item": {
      const index = node ? lastStepOf(tl, node) : -1;
      if (index < 0) return tl;
      const step = tl.entries[index] as TimelineStep;
      const map = step.map ?? { done: 0, failed: 0, failedItems: [], total: null };
      const failedItems = [...map.failedItems, Number(data.index)].sort((a, b) => a - b);
      const failed = { ...map, failed: map.failed + 1, failedItems };
      return replace(tl, index, { ...step, map: data.ok ? { ...map, done: map.done + 1 } : failed });
    }
    case "budget": {
      const usage = isData(data.usage) ? data.usage : {};
      const total = typeof usage.cost === "number" ? usage.cost : null;
      let next = tl;
      const index = node ? lastStepOf(tl, node) : -1;
      if (total !== null && index >= 0) {
        const step = tl.entries[index] as TimelineStep;
        // Budget events carry the run's totals: the step's cost is what it added.
        next = replace(next, index, { ...step, cost: Math.max(0, total - tl.costSoFar) });
        next = { ...next, costSoFar: total };
      }
      if (data.exceeded) {
        const text = `${node ?? "the run"} reached its ${String(data.exceeded)} budget (${String(data.limit)}): ${String(data.action)}`;
        next = addNote(next, { type: "budget", text, at, node, data });
      }
      return next;
    }
    case "model_route": {
      // An agent's route picked another model tier for its next call (or went back to its own).
      const why = typeof data.when === "string" ? `: ${data.when}` : " (its own model again)";
      return addNote(tl, { type: "route", text: `${node ?? "an agent"} calls ${String(data.model)}${why}`, at, node, data });
    }
    case "loop":
    case "refused":
    case "breaker":
    case "compensation":
      return addNote(tl, { type: "guard", text: guardText(data), at, node, data });
    default:
      return tl;
  }
}

function guardText(data: Data): string {
  switch (data.plait) {
    case "loop":
      return `${String(data.node)} called ${String(data.tool)} ${String(data.count)} times (limit ${String(data.limit)}): stopped as a loop`;
    case "refused":
      return `${String(data.node)} may not call ${String(data.tool)}: ${String(data.reason)}`;
    case "breaker":
      return `circuit breaker for ${String(data.target)} is ${String(data.state)}`;
    default:
      return `compensation ${String(data.step)}: ${String(data.status)}${data.error ? ` (${String(data.error)})` : ""}`;
  }
}

/** What a call of a limited tool waits for (docs/governance.md, "Tool limits"), in words. */
export function waitingText(wait: ToolWait): string {
  if (wait.reason === "concurrency") return `waiting for a slot of tool ${wait.tool} (${String(wait.limit.concurrency)} at once across all runs)`;
  if (wait.reason === "rate") return `waiting for a turn of tool ${wait.tool} (rate ${String(wait.limit.rate)} across all runs)`;
  const more = wait.retryIn !== null ? ` for ${wait.retryIn.toFixed(1)}s more` : "";
  // A Retry-After or an operator paused it: the event does not say which.
  return `waiting: tool ${wait.tool} is paused${more}`;
}

/** The same in a few words, for a node's card. */
export function waitingShort(wait: ToolWait): string {
  if (wait.reason === "concurrency") return `waits: ${wait.tool} slot`;
  if (wait.reason === "rate") return `waits: ${wait.tool} rate`;
  return `waits: ${wait.tool} paused`;
}

function lastStepOf(tl: Timeline, node: string): number {
  return findLastIndex(tl.entries, (entry) => entry.kind === "step" && entry.node === node);
}

function runningStep(tl: Timeline): number {
  return findLastIndex(tl.entries, (entry) => entry.kind === "step" && entry.status === "running");
}

function findLastIndex<T>(items: T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i])) return i;
  return -1;
}

function replace(tl: Timeline, index: number, entry: TimelineEntry): Timeline {
  const entries = tl.entries.slice();
  entries[index] = entry;
  return { ...tl, entries };
}

function mapSteps(tl: Timeline, fn: (step: TimelineStep) => TimelineStep): Timeline {
  return { ...tl, entries: tl.entries.map((entry) => (entry.kind === "step" ? fn(entry) : entry)) };
}

/** The steps of the timeline (no notes). */
export function stepsOf(timeline: Timeline): TimelineStep[] {
  return timeline.entries.filter((entry): entry is TimelineStep => entry.kind === "step");
}

/**
 * When the shown run began and last did something: the earliest time the timeline holds
 * (a step's start, or a note's) and the latest step's end.
 */
export function runSpan(timeline: Timeline): { startedAt: string | null; endedAt: string | null } {
  const starts: string[] = [];
  const ends: string[] = [];
  for (const entry of timeline.entries) {
    if (entry.kind === "step") {
      if (entry.startedAt) starts.push(entry.startedAt);
      if (entry.endedAt) ends.push(entry.endedAt);
    } else if (entry.at) {
      starts.push(entry.at);
    }
  }
  const time = (iso: string) => Date.parse(iso);
  const first = starts.length > 0 ? starts.reduce((a, b) => (time(b) < time(a) ? b : a)) : null;
  const last = ends.length > 0 ? ends.reduce((a, b) => (time(b) > time(a) ? b : a)) : null;
  return { startedAt: first, endedAt: last };
}

/**
 * Since when the shown run waits: when its newest interrupt (an approval asked, a timer set, an
 * MCP task parked) came, else when its last step ended; null when the timeline holds neither.
 */
export function parkedSince(timeline: Timeline): string | null {
  for (let i = timeline.entries.length - 1; i >= 0; i--) {
    const entry = timeline.entries[i];
    if (entry.kind === "note" && entry.at && (entry.type === "approval" || entry.type === "timer" || entry.type === "tool")) return entry.at;
  }
  return runSpan(timeline).endedAt;
}

/**
 * The edges the run took: from START to the first nodes, between the nodes of
 * one superstep (or one step, without superstep numbers) and the next, and
 * to END once the run is over. Only edges of the model count.
 */
export function takenEdges(timeline: Timeline, edges: { id: string; source: string; target: string }[], ended: boolean): string[] {
  const steps = stepsOf(timeline);
  if (steps.length === 0) return [];
  // Group consecutive executions into waves: a superstep, or each step alone.
  const waves: string[][] = [];
  let last: string | null = null;
  for (const step of steps) {
    const wave = step.superstep !== null ? `${step.run}:${step.superstep}` : step.key;
    if (wave !== last) waves.push([]);
    waves[waves.length - 1].push(step.node);
    last = wave;
  }
  const taken = new Set<string>();
  const link = (from: string[], to: string[]) => {
    for (const edge of edges) if (from.includes(edge.source) && to.includes(edge.target)) taken.add(edge.id);
  };
  link(["START"], waves[0]);
  for (let i = 0; i + 1 < waves.length; i++) link(waves[i], waves[i + 1]);
  if (ended) link(waves[waves.length - 1], ["END"]);
  return edges.filter((edge) => taken.has(edge.id)).map((edge) => edge.id);
}
