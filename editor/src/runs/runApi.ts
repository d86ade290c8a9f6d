/**
 * The few server calls only the run view makes, typed with the fields Plait
 * adds (`plait_state`, `plait_status`, a thread's graph/version): kept here so the shared
 * client stays the protocol's.
 */

import { fetchWithKey } from "../api/apiKey";
import { problemFromResponse } from "../api/errors";
import type { Checkpoint, Run, Thread } from "../api/client";

/** What one grader of the spec's `evaluation` said of a run (docs/evaluation.md). */
export interface RunScore {
  run_id: string;
  grader: string;
  status: "pending" | "scored" | "failed";
  score: number | null;
  reason: string | null;
  error: string | null;
}

/**
 * A run as Plait answers it: `status` is the Agent Server's; `plait_state` says
 * what happened (partially succeeded, waiting for a person or a tool, retrying,
 * dead-lettered...), `plait_state_label` in words; `plait_scores`, its graders' scores.
 */
export type PlaitRun = Run & {
  plait_scores?: RunScore[];
  plait_status?: string;
  plait_state?: string;
  plait_state_label?: string;
  plait_state_detail?: Record<string, unknown> | null;
  /** 0 (lowest) to 9: which of the tenant's queued runs starts first (server default 5). */
  plait_priority?: number;
  /** Not started by then, the run ends `expired` and never runs. */
  plait_expires_at?: string | null;
  /** The graph version the run executes (a draft's stored version for unsaved text). */
  plait_version?: string;
  updated_at: string;
};
/** A thread as Plait answers it: the graph version its runs use. */
export type PlaitThread = Thread & { graph?: string | null; version?: string | null; digest?: string | null };

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)["Content-Type"] = "application/json";
  }
  const response = await fetchWithKey(path, init);
  if (!response.ok) throw await problemFromResponse(response);
  return (await response.json()) as T;
}

const enc = encodeURIComponent;

/** One run of a thread. */
export function runOf(threadId: string, runId: string): Promise<PlaitRun> {
  return call<PlaitRun>("GET", `/threads/${enc(threadId)}/runs/${enc(runId)}`);
}

/** The runs of a thread, oldest first. */
export async function runsOf(threadId: string): Promise<PlaitRun[]> {
  const list = await call<PlaitRun[]>("GET", `/threads/${enc(threadId)}/runs?limit=100`);
  return [...list].sort((a, b) => a.created_at.localeCompare(b.created_at));
}

/** One record of a run's audit trail (`GET /runs/{id}/audit`). */
export interface AuditRecord {
  kind: string;
  node: string;
  step: string | null;
  tool: string | null;
  actor: string;
  detail: Record<string, unknown>;
  created_at: string;
}

/** A run's audit trail, in the order it was made. */
export function auditOf(runId: string): Promise<AuditRecord[]> {
  return call<AuditRecord[]>("GET", `/runs/${enc(runId)}/audit`);
}

/** The thread's runs as a recording for `plait replay` (a `plait-recording/v1` document). */
export function recordingOf(threadId: string): Promise<Record<string, unknown>> {
  return call<Record<string, unknown>>("GET", `/threads/${enc(threadId)}/recording`);
}

/** The graph's threads (tagged with its name), newest first. */
export function threadsOf(graph: string, limit = 30): Promise<PlaitThread[]> {
  return call<PlaitThread[]>("POST", "/threads/search", {
    metadata: { graph_id: graph },
    limit,
    sort_by: "created_at",
    sort_order: "desc",
  });
}

/**
 * Write `values` at `checkpointId` as if `asNode` had returned them: a new
 * checkpoint on a new branch, which a run can then start from.
 */
export async function editState(threadId: string, checkpointId: string, values: Record<string, unknown>, asNode: string | null): Promise<Checkpoint> {
  const body = { values, checkpoint_id: checkpointId, ...(asNode ? { as_node: asNode } : {}) };
  const answer = await call<{ checkpoint: Checkpoint }>("POST", `/threads/${enc(threadId)}/state`, body);
  return answer.checkpoint;
}

/** One event of a run's journal: `at` is when the server wrote it. */
export interface JournalEvent {
  seq: number;
  event: string;
  data: unknown;
  at?: string;
  superseded?: boolean;
}

/** Events the server returns per page (its limit is 10,000). */
const EVENTS_PAGE = 5000;

/** A run's whole journal, page by page (a long run has thousands of events). */
export async function eventsOf(runId: string): Promise<JournalEvent[]> {
  const all: JournalEvent[] = [];
  for (;;) {
    const after = all.length > 0 ? all[all.length - 1].seq : 0;
    const page = await call<JournalEvent[]>("GET", `/runs/${enc(runId)}/events?after=${after}&limit=${EVENTS_PAGE}`);
    all.push(...page);
    if (page.length < EVENTS_PAGE) return all;
  }
}
