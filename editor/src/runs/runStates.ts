/**
 * Plait's run states (the server's `engine/run/states.py`) as the run view
 * shows them: the server's label for a run, a tone for its badge, and the
 * outcome's heading. The server owns the states and their words; an older
 * server that sends none is read from the Agent Server status. The shown run
 * says its state through `shownState` alone, so the stream's phase never
 * shows as a word of its own.
 */

import { soon } from "./format";
import type { PlaitRun, PlaitThread } from "./runApi";
import type { RunPhase } from "./runStore";

export type Tone = "ok" | "partial" | "bad" | "waiting" | "active" | "none";

/** A run's state as shown: `state` (Plait's, or the status), the words, the badge's tone. */
export interface ShownState {
  state: string;
  label: string;
  tone: Tone;
}

const TONES: Record<string, Tone> = {
  succeeded: "ok",
  success: "ok",
  partially_succeeded: "partial",
  failed: "bad",
  error: "bad",
  timed_out: "bad",
  timeout: "bad",
  dead_lettered: "bad",
  expired: "bad",
  cancelled: "bad",
  interrupted: "bad",
  waiting_for_person: "waiting",
  waiting_for_tool: "waiting",
  waiting_for_timer: "waiting",
  waiting: "waiting",
  queued: "active",
  pending: "active",
  running: "active",
  retrying: "active",
};

/** The outcome's heading for the states a run ends or waits in (any other: its label). */
const STATE_HEADINGS: Record<string, string> = {
  succeeded: "Succeeded",
  failed: "Failed",
  partially_succeeded: "Partially succeeded",
  // The state's own words: the run line says them too, so the outcome repeats nothing.
  waiting_for_person: "Waiting for a person",
  waiting_for_tool: "Waiting for a tool",
  waiting_for_timer: "Waiting for a timer",
  timed_out: "Timed out",
  cancelled: "Cancelled",
  dead_lettered: "Dead-lettered",
  expired: "Expired",
};

/** Whether the run went all the way to END (succeeded, or partially: a map lost items), as its row says. */
export function reachedEnd(ended: ShownState | null): boolean {
  return ended?.tone === "ok" || ended?.tone === "partial";
}

/** The outcome's heading for a state. */
export function stateHeading(shown: ShownState): string {
  return STATE_HEADINGS[shown.state] ?? shown.label.charAt(0).toUpperCase() + shown.label.slice(1);
}

/** The words between a run's end on the stream and its row read (the editor's own, not a state). */
export const ENDING: ShownState = { state: "ending", label: "ended, reading the result…", tone: "none" };

/** The words when the stream ended but the run's row could not be read: no state is claimed. */
export const UNREAD: ShownState = { state: "unread", label: "ended; its result could not be read", tone: "none" };

/**
 * The words while the shown run's stream is broken (the network, a server restart) and the
 * editor rejoins it: the run may well go on on the server, and only its row says it ended.
 */
export const LOST: ShownState = { state: "reconnecting", label: "lost the stream, reconnecting…", tone: "active" };

/** The state each phase of the stream stands for until the server's is read. */
const PHASE_STATES: Record<RunPhase, ShownState> = {
  idle: { state: "none", label: "No run", tone: "none" },
  // A run that exists is being read: its state is what the reading will tell.
  reading: { state: "reading", label: "reading the run…", tone: "active" },
  // The run is being created: the server has no state for it yet.
  starting: { state: "starting", label: "starting", tone: "active" },
  running: { state: "running", label: "running", tone: "active" },
  // Parked on interrupts none of which says what it waits for (waits below reads those that do).
  waiting: { state: "waiting", label: "waiting", tone: "waiting" },
  // The stream ended (or failed): how the run ended is its row's to say (a map's losses, a
  // timeout, a dead letter), read next; until then no state is claimed.
  success: ENDING,
  error: ENDING,
};

/** What a parked run waits for, as its stream's interrupts say: approvals, `wait` timers, MCP tasks (by node). */
export interface Waits {
  approvals: Record<string, unknown>;
  timers: Record<string, string>;
  tools: Record<string, string>;
}

/**
 * The shown run's state, the one source of the run view's words: the server's once it is
 * read (`ended`), before that what the stream has told. The stream ends before the run's
 * row is read, and its phase's own words ("success") are not states. A parked run waits
 * for what its interrupts' kinds say, weighed as the server weighs them
 * (engine/run/states.py `waiting_on`): a person if any asks one, else the tools, else the timers.
 * While the stream is `lost` (and the end not read), it says so: nothing is known meanwhile.
 */
export function shownState(phase: RunPhase, ended: ShownState | null, waits: Waits, lost = false): ShownState {
  if (ended) return ended;
  if (lost) return LOST;
  if (phase !== "waiting") return PHASE_STATES[phase];
  if (Object.keys(waits.approvals).length > 0) return { state: "waiting_for_person", label: "waiting for a person", tone: "waiting" };
  const tools = [...new Set(Object.values(waits.tools))].sort();
  if (tools.length > 0) return { state: "waiting_for_tool", label: `waiting for ${tools.join(", ")}`, tone: "waiting" };
  const until = Object.values(waits.timers).sort((a, b) => Date.parse(a) - Date.parse(b))[0];
  if (until) return { state: "waiting_for_timer", label: `waiting until ${soon(until)}`, tone: "waiting" };
  return PHASE_STATES.waiting;
}

/** The server's priority when neither the request nor the spec gives one. */
const DEFAULT_PRIORITY = 5;

/**
 * What a run's place in the queue adds to its line: a priority other than the
 * default, and the deadline of a run still waiting (`when` formats it). Empty
 * when there is nothing to say, as for most runs.
 */
export function queueNote(run: PlaitRun, when: (iso: string) => string): string {
  const parts: string[] = [];
  if (run.plait_priority !== undefined && run.plait_priority !== DEFAULT_PRIORITY) parts.push(`priority ${run.plait_priority}`);
  const waiting = (run.plait_state ?? run.status) === "queued" || run.status === "pending";
  if (waiting && run.plait_expires_at) parts.push(`expires ${when(run.plait_expires_at)}`);
  return parts.join(" · ");
}

/** How one run is shown. */
export function runState(run: PlaitRun): ShownState {
  const state = run.plait_state ?? (run.plait_status === "dead_lettered" ? "dead_lettered" : run.status);
  return { state, label: stateLabel(run, state), tone: TONES[state] ?? "none" };
}

/** The server's words, with the times it writes as ISO shown as a person reads them. */
function stateLabel(run: PlaitRun, state: string): string {
  const detail = run.plait_state_detail ?? {};
  const until = (detail.waiting as { until?: unknown } | undefined)?.until;
  if (state === "waiting_for_timer" && typeof until === "string") return `waiting until ${soon(until)}`;
  if (state === "expired" && typeof detail.expires_at === "string") return `expired: not started by ${soon(detail.expires_at)}`;
  return run.plait_state_label ?? state.replace(/_/g, " ");
}

/** How a thread's runs ended: its newest run's state ("waiting" at an approval on an older server). */
export function pastState(thread: PlaitThread, runs: PlaitRun[]): ShownState {
  const last = runs[runs.length - 1];
  if (!last) return { state: "none", label: "no run", tone: "none" };
  if (!last.plait_state && thread.status === "interrupted") return { state: "waiting", label: "waiting", tone: "waiting" };
  return runState(last);
}
