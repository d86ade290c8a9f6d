/**
 * Typed fetch wrappers for the server: the LangGraph Agent Server protocol
 * routes the editor uses, and Plait's own `/graphs`, `/approvals` and
 * `/runs/{rid}/events`. Every path is relative: the page only talks to the
 * origin that served it. Errors are RFC 9457 problem+json; their `detail`
 * (and Plait's `errors`, the spec issues) are kept on `ApiError`. Every
 * request goes through `fetchWithKey` (apiKey.ts): the stored API key as
 * `x-api-key`, and the key prompt on a 401.
 */

import type { XY } from "../spec/layout";
import { fetchWithKey } from "./apiKey";
import { problemFromResponse, type SpecIssue } from "./errors";
import { streamRun, streamSse, type SseMessage, type StreamOptions } from "./sse";

export { ApiError, problemFromResponse, type SpecIssue } from "./errors";

async function request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const init: RequestInit = { method, headers: { Accept: "application/json", ...headers } };
  if (body !== undefined) {
    if (typeof body === "string") {
      init.body = body;
    } else {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)["Content-Type"] = "application/json";
    }
  }
  const response = await fetchWithKey(path, init);
  if (!response.ok) throw await problemFromResponse(response);
  if (response.status === 204) return undefined as T;
  const type = response.headers.get("Content-Type") ?? "";
  return (type.includes("json") ? await response.json() : await response.text()) as T;
}

const enc = encodeURIComponent;

// ---------------------------------------------------------------- Plait graphs

export interface GraphVersionInfo {
  name: string;
  version: string;
  digest: string;
  assistant_id: string;
  description?: string | null;
  file?: string | null;
  created_at: string;
  /** The change note saved with it. */
  note?: string | null;
  /** A draft (unsaved text someone ran), not a published version. */
  draft?: boolean;
}

/** `POST /drafts`: unsaved text stored to run it; `assistant_id` starts its runs. */
export interface DraftInfo extends GraphVersionInfo {
  /** The spec's own `metadata.version` (`version` is `<it>+draft.<digest>`). */
  spec_version: string;
}

/** A tenant's rollout of a graph: which versions new threads start on (decision 90). */
export interface RolloutInfo {
  graph: string;
  /** `null`: no rollout (new threads start on the newest version). */
  stable: string | null;
  canary: string | null;
  /** Percent of new threads that start on the canary. */
  share: number;
  updated_at: string | null;
}

/** `GET /graphs/{name}/rollout`: the rollout and the versions that ran in the window. */
export interface RolloutReport extends RolloutInfo {
  window_hours: number;
  versions: { version: string; role: "canary" | "stable" | null; runs: number; threads: number }[];
}

export interface GraphSummary {
  name: string;
  versions: string[];
  latest: GraphVersionInfo;
  rollout?: RolloutInfo | null;
}

export interface GraphDiff {
  name: string;
  from: string;
  to: string;
  unified: string;
  nodes: { added: string[]; removed: string[]; changed: string[] };
}

export const graphs = {
  list: () => request<GraphSummary[]>("GET", "/graphs"),
  versions: (name: string) => request<GraphVersionInfo[]>("GET", `/graphs/${enc(name)}/versions`),
  yaml: (name: string, version: string) => request<string>("GET", `/graphs/${enc(name)}/versions/${enc(version)}`, undefined, { Accept: "application/yaml" }),
  /** The tenant's rollout of the graph and the runs per version of the last day. */
  rollout: (name: string) => request<RolloutReport>("GET", `/graphs/${enc(name)}/rollout`),
  /** Start or change the rollout: `canary` gets `share` percent of new threads (`stable` left out: the server's). */
  setRollout: (name: string, body: { canary?: string | null; share?: number; stable?: string }) =>
    request<RolloutInfo>("PUT", `/graphs/${enc(name)}/rollout`, body),
  /** The canary becomes the stable version (`promote`) or is dropped (`rollback`). */
  settleRollout: (name: string, how: "promote" | "rollback") => request<RolloutInfo>("POST", `/graphs/${enc(name)}/rollout/${how}`),
  /** End the rollout: new threads start on the newest version again. */
  endRollout: (name: string) => request<void>("DELETE", `/graphs/${enc(name)}/rollout`),
  diff: (name: string, from: string, to: string) => request<GraphDiff>("GET", `/graphs/${enc(name)}/diff?from=${enc(from)}&to=${enc(to)}`),
  /**
   * Publish a version: 201 new, 200 same content again; 422 (issues) or 409
   * (version taken). `note` is kept with it; `layout` (node positions) is
   * written beside the spec with it.
   */
  upload: (yaml: string, extra: { note?: string; layout?: Record<string, XY> } = {}) =>
    request<GraphVersionInfo & { layout_saved?: boolean }>("POST", "/graphs", { yaml, ...extra }),
  /** Store unsaved text as a draft to run it (validated as an upload, never published). */
  draft: (yaml: string) => request<DraftInfo>("POST", "/drafts", { yaml }),
  /** Server-side validation of unsaved text. */
  validate: (yaml: string) => request<{ issues: SpecIssue[] }>("POST", "/graphs/validate", { yaml }),
  /** Node positions: a sidecar per graph (`{node_id: {x, y}}`), outside the spec so they never change its digest. */
  layout: (name: string) => request<unknown>("GET", `/graphs/${enc(name)}/layout`),
};

// ------------------------------------------------------------------ assistants

export interface Assistant {
  assistant_id: string;
  graph_id: string;
  name: string;
  version: number;
  description?: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
}

export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  default?: unknown;
  [key: string]: unknown;
}

export interface AssistantSchemas {
  graph_id: string;
  input_schema: JsonSchema | null;
  output_schema: JsonSchema | null;
  state_schema: JsonSchema | null;
  config_schema?: JsonSchema | null;
  context_schema?: JsonSchema | null;
}

export const assistants = {
  search: (body: { graph_id?: string; limit?: number; offset?: number } = {}) => request<Assistant[]>("POST", "/assistants/search", { limit: 100, ...body }),
  get: (id: string) => request<Assistant>("GET", `/assistants/${enc(id)}`),
  schemas: (id: string) => request<AssistantSchemas>("GET", `/assistants/${enc(id)}/schemas`),
};

// --------------------------------------------------------------------- threads

export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";

export interface Thread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  status: ThreadStatus;
  values?: Record<string, unknown> | null;
  interrupts?: Record<string, InterruptInfo[]>;
}

export interface InterruptInfo {
  id?: string;
  interrupt_id?: string;
  value: unknown;
}

export interface Checkpoint {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
}

export interface StateTask {
  id: string;
  name: string;
  error?: string | null;
  interrupts: InterruptInfo[];
  result?: unknown;
}

export interface ThreadState {
  values: Record<string, unknown> | unknown[];
  next: string[];
  checkpoint: Checkpoint;
  metadata: Record<string, unknown> | null;
  created_at: string | null;
  parent_checkpoint: Checkpoint | null;
  tasks: StateTask[];
  interrupts?: InterruptInfo[];
}

export const threads = {
  create: (metadata: Record<string, unknown> = {}) => request<Thread>("POST", "/threads", { metadata }),
  get: (id: string) => request<Thread>("GET", `/threads/${enc(id)}`),
  search: (body: { metadata?: Record<string, unknown>; status?: ThreadStatus; limit?: number; offset?: number } = {}) =>
    request<Thread[]>("POST", "/threads/search", { limit: 50, sort_by: "created_at", sort_order: "desc", ...body }),
  state: (id: string) => request<ThreadState>("GET", `/threads/${enc(id)}/state`),
  stateAt: (id: string, checkpointId: string) => request<ThreadState>("GET", `/threads/${enc(id)}/state/${enc(checkpointId)}`),
  /** Checkpoints, newest first. */
  history: (id: string, limit = 100) => request<ThreadState[]>("POST", `/threads/${enc(id)}/history`, { limit }),
  /**
   * The thread's events as the thread protocol streams them (`POST /threads/{id}/stream/events`):
   * from its current run on, run after run, until the client closes it. `channels` picks which
   * (`lifecycle`: each run's start and end).
   */
  events: (id: string, channels: string[], signal?: AbortSignal): AsyncGenerator<SseMessage> =>
    streamSse(`/threads/${enc(id)}/stream/events`, { body: { channels }, signal }),
};

/** A thread protocol event (a `threads.events` message's data). */
export interface ThreadEvent {
  type: "event";
  event_id?: string;
  seq?: number;
  method: string;
  params: { namespace: string[]; timestamp?: number; data: unknown };
}

// ------------------------------------------------------------------------ runs

export type RunStatus = "pending" | "running" | "error" | "success" | "timeout" | "interrupted";

export interface Run {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: RunStatus;
  metadata: Record<string, unknown>;
  multitask_strategy?: string | null;
}

/** The stream modes the editor asks for: node status, tokens, state, tool calls. */
export const EDITOR_STREAM_MODES = ["updates", "messages-tuple", "custom", "values", "tasks"] as const;

export interface RunStreamRequest {
  assistant_id: string;
  input?: Record<string, unknown> | null;
  command?: { resume?: unknown; goto?: unknown; update?: unknown } | null;
  checkpoint_id?: string;
  metadata?: Record<string, unknown>;
  stream_mode?: readonly string[];
  stream_resumable?: boolean;
  multitask_strategy?: "reject" | "enqueue" | "interrupt" | "rollback";
}

/** How a run's stream is followed: `maxRejoins` (default 3) and a look at the response. */
export type Follow = Pick<StreamOptions, "onResponse"> & { maxRejoins?: number };

/** The run a run's response names in `Content-Location` (`/threads/{tid}/runs/{rid}`), or null. */
export function runOfResponse(response: Response): string | null {
  const named = /\/runs\/([^/?#]+)$/.exec(response.headers.get("Content-Location") ?? "");
  return named ? decodeURIComponent(named[1]) : null;
}

function idempotencyKey(): string {
  return crypto.randomUUID();
}

export const runs = {
  list: (threadId: string, limit = 50) => request<Run[]>("GET", `/threads/${enc(threadId)}/runs?limit=${limit}`),
  get: (threadId: string, runId: string) => request<Run>("GET", `/threads/${enc(threadId)}/runs/${enc(runId)}`),
  cancel: (threadId: string, runId: string) => request<void>("POST", `/threads/${enc(threadId)}/runs/${enc(runId)}/cancel`),
  /**
   * Start a run on a thread and stream it (rejoins with Last-Event-ID on a dropped connection,
   * `maxRejoins` times: 0 leaves rejoining to the caller). `onResponse` gets the response
   * (its `Content-Location` names the run).
   */
  stream: (threadId: string, body: RunStreamRequest, signal?: AbortSignal, options: Follow = {}): AsyncGenerator<SseMessage> =>
    streamRun(`/threads/${enc(threadId)}/runs/stream`, {
      body: { stream_mode: EDITOR_STREAM_MODES, stream_resumable: true, ...body },
      headers: { "Idempotency-Key": idempotencyKey() },
      threadId,
      signal,
      ...options,
    }),
  /** Join an existing run's stream (e.g. the resume run an approval decision created), after `lastEventId`. */
  join: (threadId: string, runId: string, signal?: AbortSignal, lastEventId?: string | null, options: Follow = {}): AsyncGenerator<SseMessage> =>
    streamRun(`/threads/${enc(threadId)}/runs/${enc(runId)}/stream`, { threadId, signal, lastEventId, ...options }),
  /** A run's journal (every event it streamed). */
  events: (runId: string) => request<{ event: string; data: unknown; seq?: number }[]>("GET", `/runs/${enc(runId)}/events`),
};

// ------------------------------------------------------------------- approvals

export type ApprovalStatus = "pending" | "approved" | "rejected" | "edited" | "expired";

export interface Approval {
  approval_id: string;
  thread_id: string;
  run_id: string;
  graph: string;
  version: string;
  node: string;
  interrupt_id?: string | null;
  action: string | null;
  arguments: unknown;
  reason: string | null;
  /** Spend so far (tokens / cost) when the server tracks a budget; null otherwise. */
  budget?: unknown;
  budget_used?: unknown;
  expires_at: string | null;
  on_expire?: string | null;
  status: ApprovalStatus;
  decision?: unknown;
  created_at?: string;
  /** Who decided: the decision's `actor`, and with API keys on the key (`alice (key:k1)`). */
  decided_by?: string | null;
  decided_at?: string | null;
  /** The run the decision started to resume the thread. */
  resume_run_id?: string | null;
}

export interface Decision {
  decision: "approve" | "reject" | "edit";
  arguments?: unknown;
  comment?: string;
  actor?: string;
}

/** What deciding returns: the decided approval and the run that resumes the thread. */
export interface DecisionResult {
  approval?: Approval;
  run?: Run;
  [key: string]: unknown;
}

export const approvals = {
  /** `decided`: every approval no longer pending; `order`: by request time. */
  list: (status: ApprovalStatus | "decided" | "all" = "pending", order: "oldest" | "newest" = "oldest") =>
    request<Approval[]>("GET", `/approvals?status=${status}${order === "newest" ? "&order=newest" : ""}`),
  decide: (id: string, decision: Decision) => request<DecisionResult>("POST", `/approvals/${enc(id)}/decision`, decision),
};

/** The run a decision response names, whatever its exact shape (`run`, or `run_id` + `thread_id`). */
export function resumedRun(result: DecisionResult): { thread_id: string; run_id: string } | null {
  if (result.run?.run_id) return { thread_id: result.run.thread_id, run_id: result.run.run_id };
  const runId = result.run_id;
  const threadId = result.thread_id;
  return typeof runId === "string" && typeof threadId === "string" ? { thread_id: threadId, run_id: runId } : null;
}
