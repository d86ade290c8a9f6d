/**
 * What became of the decisions made in this tab: which run each one
 * resumed and how that run ended ("Approved — resumed run 1a2b… · success").
 * The inbox and the canvas card both report here; the top bar shows the newest
 * until its run has settled and the person has moved to another page.
 */

import { create } from "zustand";
import { runs, type Decision, type RunStatus } from "../api/client";
import { useRunStore, type RunPhase } from "../runs/runStore";
import type { PlaitRun } from "../runs/runApi";
import { runState } from "../runs/runStates";
import { refreshPending } from "./pendingCount";

export interface DecisionOutcome {
  /** Unique per decision (the approval id, or thread and node when the card had none). */
  key: string;
  graph: string;
  version: string;
  node: string;
  action: string | null;
  decision: Decision["decision"];
  threadId: string;
  /** The run that resumes the thread (null until known). */
  runId: string | null;
  /** That run's status (null until known); `pending`/`running` until it ends. */
  status: RunStatus | null;
  /** How it ended in Plait's words (the run view's), once it has. */
  ended: string | null;
  error: string | null;
}

interface Feedback {
  /** Newest first. */
  outcomes: DecisionOutcome[];
  /** Outcomes the top bar no longer shows (settled, then the page changed). */
  offHeader: string[];
  dismiss(key: string): void;
  /** The page changed: the top bar lets go of the outcomes that have settled. */
  pageChanged(): void;
}

const KEEP = 20;
const POLL_MS = 1000;
const TERMINAL: RunStatus[] = ["success", "error", "timeout", "interrupted"];
/** Run panel phases in which the run it streams has ended. */
const ENDED: RunPhase[] = ["success", "error", "waiting"];

export const useDecisionFeedback = create<Feedback>()((set) => ({
  outcomes: [],
  offHeader: [],
  dismiss: (key) => set((s) => ({ outcomes: s.outcomes.filter((o) => o.key !== key) })),
  pageChanged: () =>
    set((s) => {
      const settled = s.outcomes.filter((o) => settledOutcome(o) && !s.offHeader.includes(o.key)).map((o) => o.key);
      return settled.length ? { offHeader: [...s.offHeader, ...settled].slice(-KEEP) } : s;
    }),
}));

/** Whether the decision's story is over: its run ended, or following it failed. */
function settledOutcome(outcome: Pick<DecisionOutcome, "status" | "error">): boolean {
  return outcome.error !== null || (outcome.status !== null && TERMINAL.includes(outcome.status));
}

/** What the top bar shows: the newest outcome, unless it settled before the page last changed. */
export function headerOutcome(s: Pick<Feedback, "outcomes" | "offHeader">): DecisionOutcome | null {
  const newest = s.outcomes[0];
  return newest && !s.offHeader.includes(newest.key) ? newest : null;
}

function update(key: string, change: Partial<DecisionOutcome>): void {
  useDecisionFeedback.setState((s) => ({ outcomes: s.outcomes.map((o) => (o.key === key ? { ...o, ...change } : o)) }));
}

/** Record a decision being sent (its run not known yet). */
export function decisionSent(outcome: Omit<DecisionOutcome, "runId" | "status" | "ended" | "error">): void {
  useDecisionFeedback.setState((s) => ({
    outcomes: [{ ...outcome, runId: null, status: null, ended: null, error: null }, ...s.outcomes.filter((o) => o.key !== outcome.key)].slice(0, KEEP),
    offHeader: s.offHeader.filter((key) => key !== outcome.key),
  }));
}

/** The decision failed: say so where its outcome would be. */
export function decisionFailed(key: string, message: string): void {
  update(key, { error: message });
}

/** The decision resumed `runId`: follow it until it ends (polling its status). */
export async function decisionResumed(key: string, threadId: string, runId: string): Promise<void> {
  update(key, { runId, threadId });
  void refreshPending();
  for (;;) {
    let run: PlaitRun;
    try {
      run = await runs.get(threadId, runId);
    } catch (e) {
      update(key, { error: e instanceof Error ? e.message : String(e) });
      return;
    }
    const status = run.status;
    const done = TERMINAL.includes(status);
    update(key, { status, ended: done ? runState(run).label : null });
    if (done) break;
    await untilNextLook(runId);
    if (!useDecisionFeedback.getState().outcomes.some((o) => o.key === key)) return; // dismissed
  }
  // A resumed run may park on the next approval.
  void refreshPending();
}

const VERB: Record<Decision["decision"], string> = { approve: "Approved", reject: "Rejected", edit: "Approved with edits" };

/** "Approved with edits" etc. */
export function decisionVerb(decision: Decision["decision"]): string {
  return VERB[decision];
}

/** How the resumed run stands, in words a person reads ("running…", "success", "waits for another approval"). */
export function runOutcomeText(outcome: Pick<DecisionOutcome, "runId" | "status" | "ended" | "error">): string {
  if (outcome.error) return `could not follow the run: ${outcome.error}`;
  if (!outcome.runId) return "resuming…";
  if (outcome.status === null || outcome.status === "pending") return "queued…";
  if (outcome.status === "running") return "running…";
  // Plait's words, as the run view says them: a run that stops on the next approval
  // ended `success` but is "waiting for a person".
  return outcome.ended ?? outcome.status;
}

/** A poll interval, or less: until the run panel, which streams the run, sees `runId` end
 * (so the note does not say "running" beside a panel that says it ended). */
function untilNextLook(runId: string): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      window.clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    const timer = window.setTimeout(done, POLL_MS);
    const unsubscribe = useRunStore.subscribe((s) => {
      if (s.runId === runId && ENDED.includes(s.phase)) done();
    });
  });
}
