/**
 * Drives the live run shown on the canvas: starts runs, forks, joins the
 * resume run after an approval decision, and feeds every stream message into
 * the run store. One stream at a time; starting another aborts the previous one.
 */

import { ApiError, approvals, resumedRun, runOfResponse, runs, threads, type Decision, type ThreadEvent, type ThreadState } from "../api/client";
import type { SseMessage } from "../api/sse";
import { pendingApprovals, refreshPending } from "../approvals/pendingCount";
import { ranTargetOf, useStartedRun } from "../graphs/runTarget";
import { hasSteps, historySteps, isStepEvent } from "./historySteps";
import { eventsOf, runOf, runsOf } from "./runApi";
import { runState, UNREAD } from "./runStates";
import {
  type ApprovalRequest,
  approvalRequest,
  foldAll,
  freshView,
  nextRunView,
  type RunPhase,
  type RunView,
  timerWait,
  toolPark,
  useRunStore,
} from "./runStore";
import { addEvent, addNote, publicState, type RunEvent, type TimelineNote } from "./timeline";

/**
 * The stream modes the editor's runs ask for: `debug` (not `tasks`) because its
 * task start and result carry timestamps, which time each step of the timeline.
 */
export const RUN_STREAM_MODES = ["updates", "messages-tuple", "custom", "values", "debug"] as const;

let current: AbortController | null = null;

function nextSignal(): AbortSignal {
  current?.abort();
  current = new AbortController();
  return current.signal;
}

/** Stop following the live stream (the run itself continues on the server). */
export function detach(): void {
  current?.abort();
  current = null;
}

/** The assistant id of one graph version (the server accepts `name@version`). */
export function assistantOf(graph: string, version: string): string {
  return `${graph}@${version}`;
}

/** How long to wait before the `attempt`th rejoin of a broken stream: at once, then 1, 2, 4, 8 s, then every 10 s. */
export function rejoinDelay(attempt: number): number {
  return attempt === 0 ? 0 : Math.min(1000 * 2 ** (attempt - 1), 10_000);
}

/**
 * Whether a stream that broke with `error` can be rejoined: the connection failed (the network,
 * a server restarting, a proxy's 502), not the server refusing the request (a 4xx).
 */
export function canRejoin(error: unknown): boolean {
  if (!(error instanceof ApiError)) return true;
  return error.status >= 500 || error.status === 408 || error.status === 429;
}

/** Wait `ms`, or less: until the browser is back online, or `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    // A page's window says when the network is back (unit tests run without one).
    const online = typeof window === "undefined" ? null : window;
    const done = () => {
      clearTimeout(timer);
      online?.removeEventListener("online", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    online?.addEventListener("online", done);
    signal.addEventListener("abort", done);
  });
}

/** The rejoins the editor's own streams make: none inside the stream, follow does them (and says so). */
const OWN_REJOINS = { maxRejoins: 0 };

/**
 * Feed a run's stream into the store until the run's `end`. A stream that breaks before it (the
 * network, a server restart) or closes without it says so (`lost`) and is rejoined with
 * Last-Event-ID, at once and then less and less often, for as long as the run is shown: the run
 * may go on on the server, and only its row, read at the end, says how it ended. Only a stream
 * that never named its run, or that the server refuses, is the editor's failure.
 */
async function follow(stream: AsyncGenerator<SseMessage>, signal: AbortSignal): Promise<void> {
  const store = useRunStore.getState();
  const began = new Date().toISOString();
  let lastId: string | null = null;
  let attempt = 0;
  // A stream without the graph's task events (a run another client started with `values`):
  // its steps are read from its checkpoints once it ends.
  let steps = false;
  for (;;) {
    let ended = false;
    try {
      for await (const message of stream) {
        if (signal.aborted) return;
        if (message.id) lastId = message.id;
        // The run's events come again: a later drop starts its rejoins over.
        attempt = 0;
        // When it arrived: the timeline's time for events that carry none of their own.
        store.apply({ ...message, at: new Date().toISOString() });
        if (message.event === "end") ended = true;
        if (isStepEvent(message)) steps = true;
      }
    } catch (error) {
      if (signal.aborted) return;
      const { runId } = useRunStore.getState();
      if (!runId || !canRejoin(error)) {
        store.fail(error instanceof Error ? error.message : String(error));
        return;
      }
    }
    if (signal.aborted) return;
    if (ended) break;
    const { threadId, runId } = useRunStore.getState();
    if (!threadId || !runId) {
      store.fail("the stream closed before the run was created");
      return;
    }
    useRunStore.setState({ lost: true });
    await pause(rejoinDelay(attempt), signal);
    if (signal.aborted) return;
    attempt += 1;
    stream = runs.join(threadId, runId, signal, lastId, {
      ...OWN_REJOINS,
      // Rejoined: the run's events come again from where they stopped (a server that answers and
      // drops at once is rejoined less and less often all the same: only an event counts as progress).
      onResponse: () => {
        if (!signal.aborted) useRunStore.setState({ lost: false });
      },
    });
  }
  try {
    const { runId } = useRunStore.getState();
    await reconcile(steps || !runId ? null : { runId, startedAt: began });
    if (useRunStore.getState().phase === "waiting") await findApprovalIds();
    await noteEnded();
  } catch (error) {
    // The server went away (or a proxy refused) after the end: say so, not "reading" for ever.
    // Opening the run again (Past runs) reads it.
    if (!signal.aborted)
      useRunStore.setState({ ended: UNREAD, error: `${error instanceof Error ? error.message : String(error)}; open the run again from Past runs to read it` });
    return;
  }
  void watchThread(signal);
}

/** The stream of a new run: the run it created is known from the response, before its first event. */
function created(signal: AbortSignal) {
  return {
    ...OWN_REJOINS,
    onResponse: (response: Response) => {
      const runId = runOfResponse(response);
      if (runId && !signal.aborted) useRunStore.setState({ runId });
    },
  };
}

/**
 * Start a run of `graph@version` (or of `assistantId`: a draft of it) on a new
 * thread tagged with the graph, and stream it.
 */
export async function startRun(
  graph: string,
  version: string,
  nodes: string[],
  input: Record<string, unknown>,
  assistantId: string = assistantOf(graph, version),
): Promise<string> {
  const signal = nextSignal();
  // Every node reads pending at once: the canvas answers the click before the server does.
  useRunStore.getState().begin(null, assistantId, nodes);
  const thread = await threads.create({ graph_id: graph, plait_version: version });
  if (signal.aborted) return thread.thread_id;
  useRunStore.setState({ threadId: thread.thread_id });
  void follow(
    runs.stream(thread.thread_id, { assistant_id: assistantId, input, metadata: { graph_id: graph }, stream_mode: RUN_STREAM_MODES }, signal, created(signal)),
    signal,
  );
  return thread.thread_id;
}

/** Fork: a new run on the thread from `checkpointId` (LangGraph replays from there on a new branch). */
export async function forkRun(threadId: string, assistantId: string, checkpointId: string, nodes: string[], done: Record<string, boolean>): Promise<void> {
  const signal = nextSignal();
  const store = useRunStore.getState();
  store.begin(threadId, assistantId, nodes);
  useRunStore.setState({
    nodeStatus: Object.fromEntries(nodes.map((node) => [node, done[node] ? "done" : "pending"])),
  });
  await follow(
    runs.stream(threadId, { assistant_id: assistantId, input: null, checkpoint_id: checkpointId, stream_mode: RUN_STREAM_MODES }, signal, created(signal)),
    signal,
  );
}

/**
 * Show a past run: read the journals of the thread's runs, then show them at once and follow
 * the newest if it is still going. A thread on screen (a timer's resume run found, a past run
 * picked again) stays as it is shown until then; another says it is being read, never that it
 * is starting: it exists.
 */
export async function openThread(threadId: string, assistantId: string, nodes: string[]): Promise<void> {
  const signal = nextSignal();
  const onScreen = useRunStore.getState();
  if (onScreen.threadId !== threadId || onScreen.phase === "idle") onScreen.read(threadId, assistantId);
  // Oldest first, so node states build up across a run and its resumes.
  const ordered = await runsOf(threadId);
  if (signal.aborted) return;
  const last = ordered[ordered.length - 1];
  // "This run ran …": what its row says, as for a run started here.
  const ran = last ? ranTargetOf(last) : null;
  if (ran) useStartedRun.getState().started(ran, threadId);
  // A past run keeps the version it ran on: resumes and forks must use the same one.
  let view = freshView(threadId, last?.assistant_id ?? assistantId, nodes, "reading");
  let history: ThreadState[] | undefined;
  if (!last) {
    useRunStore.setState({ ...view, phase: "idle" });
    return;
  }
  for (const [i, run] of ordered.entries()) {
    if (i > 0) view = nextRunView(view, run.run_id);
    const decided = decisionNote(run.metadata, run.created_at);
    if (decided) view = { ...view, timeline: addNote(view.timeline, decided) };
    if (run.status === "pending" || run.status === "running") {
      // Still going: show what its thread did so far, and follow it live.
      useRunStore.setState({ ...view, runId: run.run_id, phase: "running" });
      await follow(runs.join(threadId, run.run_id, signal, null, OWN_REJOINS), signal);
      return;
    }
    const events = await eventsOf(run.run_id);
    if (signal.aborted) return;
    let shown: RunEvent[] = events.filter((event) => !event.superseded).map((event) => ({ event: event.event, data: event.data, at: event.at ?? null }));
    if (!hasSteps(shown)) {
      // Started without step events (an API client's `values`): its checkpoints tell its steps.
      history ??= await threads.history(threadId, 500);
      if (signal.aborted) return;
      const opening = shown.findIndex((event) => event.event !== "metadata");
      const at = opening < 0 ? shown.length : opening;
      shown = [...shown.slice(0, at), ...historySteps(history, run.run_id, run.created_at), ...shown.slice(at)];
    }
    view = foldAll(
      view,
      shown.map((event) => ({ ...event, id: null })),
    );
  }
  const [read, thread] = await Promise.all([history ?? threads.history(threadId, 500), threads.get(threadId)]);
  if (signal.aborted) return;
  view = { ...view, ...settle(view, read) };
  let phase: RunPhase = view.phase === "error" ? "error" : "success";
  if (thread.status === "interrupted" || Object.keys(view.approvals).length > 0) phase = "waiting";
  else if (thread.status === "error") phase = "error";
  const error = phase === "error" ? (view.error ?? "the run failed") : view.error;
  // The newest run's row says how it ended: read with the list, it is shown with the rest.
  useRunStore.setState({ ...view, runId: last.run_id, phase, error, ended: runState(last) });
  if (phase === "waiting") await findApprovalIds();
  void watchThread(signal);
}

/** Whether a thread protocol message says a run of the thread started. */
export function runStarted(message: SseMessage): boolean {
  const event = message.data as ThreadEvent | null;
  return event?.method === "lifecycle" && (event.params?.data as { event?: string } | null)?.event === "started";
}

/** The page's document, when there is one (unit tests run without). */
const page = (): Document | null => (typeof document === "undefined" ? null : document);

/** Wait while the page is hidden (another tab, a minimised window), or until `signal` aborts. */
function whileHidden(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const doc = page();
    if (!doc || doc.visibilityState !== "hidden" || signal.aborted) return resolve();
    const done = () => {
      if (doc.visibilityState === "hidden" && !signal.aborted) return;
      doc.removeEventListener("visibilitychange", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    doc.addEventListener("visibilitychange", done);
    signal.addEventListener("abort", done);
  });
}

/**
 * While the shown run waits (for a person, a timer, an MCP task), watch its thread for the run
 * that resumes it, whoever starts it: the server (a timer, the MCP task poller), a person
 * elsewhere (the approvals inbox, another editor). The thread's event stream tells each run's
 * start (the one on screen first); a start of another run than the one shown opens the thread
 * again, which follows that run live. A broken watch is opened again, less and less often. A
 * hidden page holds no watch (a browser keeps few connections to one server across its tabs): it
 * opens again when the page is shown, and its first event tells what happened meanwhile.
 */
async function watchThread(signal: AbortSignal): Promise<void> {
  const { threadId, runId, assistantId, nodeStatus, phase } = useRunStore.getState();
  if (!threadId || !runId || !assistantId || phase !== "waiting") return;
  for (let attempt = 0; !signal.aborted; attempt += 1) {
    await pause(attempt === 0 ? 0 : rejoinDelay(attempt), signal);
    await whileHidden(signal);
    if (signal.aborted) return;
    const watch = new AbortController();
    const stop = () => watch.abort();
    const hide = () => page()?.visibilityState === "hidden" && watch.abort();
    signal.addEventListener("abort", stop);
    page()?.addEventListener("visibilitychange", hide);
    let resumed = false;
    try {
      for await (const message of threads.events(threadId, ["lifecycle"], watch.signal)) {
        attempt = 0;
        if (!runStarted(message)) continue;
        const [newest] = await runs.list(threadId, 1);
        if (newest && newest.run_id !== runId) {
          resumed = true;
          break;
        }
      }
    } catch {
      // The watch broke (the network, a server restart) or the page was hidden: opened again below.
    } finally {
      signal.removeEventListener("abort", stop);
      page()?.removeEventListener("visibilitychange", hide);
      watch.abort();
    }
    if (signal.aborted) return;
    if (resumed) {
      // Whatever resumed it may have decided an approval: the top bar's count says so now.
      void refreshPending();
      try {
        await openThread(threadId, assistantId, Object.keys(nodeStatus));
      } catch (error) {
        if (useRunStore.getState().threadId === threadId)
          useRunStore.setState({ error: `cannot read the run that resumed the thread: ${error instanceof Error ? error.message : String(error)}` });
      }
      return;
    }
    // Hidden, not broken: open it again as soon as the page is shown.
    if (page()?.visibilityState === "hidden") attempt = -1;
  }
}

/** Read how the shown run ended as Plait tells it: its stream carries only the Agent Server's events. */
async function noteEnded(): Promise<void> {
  const { threadId, runId } = useRunStore.getState();
  if (!threadId || !runId) return;
  const run = await runOf(threadId, runId);
  if (useRunStore.getState().runId === runId) useRunStore.setState({ ended: runState(run) });
}

/**
 * Settle node statuses from the thread's checkpoints once a stream ends. The
 * stream may not carry `tasks` events (a resume run created by an approval
 * decision streams the modes of the run it resumes), but the checkpoint chain
 * says which nodes ran: every node some earlier checkpoint had as `next`.
 * Only the live branch counts (parent links from the newest checkpoint), so
 * steps of other forks are ignored. `withoutSteps`: the run whose stream
 * carried none, whose steps the checkpoints then tell (`historySteps`).
 */
async function reconcile(withoutSteps: { runId: string; startedAt: string } | null): Promise<void> {
  const { threadId } = useRunStore.getState();
  if (!threadId) return;
  const history = await threads.history(threadId, 500);
  const view = useRunStore.getState();
  const timeline = withoutSteps ? historySteps(history, withoutSteps.runId, withoutSteps.startedAt).reduce(addEvent, view.timeline) : view.timeline;
  useRunStore.setState({ ...settle(view, history), timeline });
}

/** What `history` (the thread's checkpoints, newest first) settles of the shown run (pure; see reconcile). */
export function settle(view: Pick<RunView, "nodeStatus" | "approvals" | "timers" | "tools" | "phase">, history: ThreadState[]): Partial<RunView> {
  const { nodeStatus, approvals: known, timers: knownTimers, tools: knownTools } = view;
  const latest = history[0];
  if (!latest) return {};
  const byId = new Map(history.map((state) => [state.checkpoint.checkpoint_id, state]));
  const ran = new Set<string>();
  for (let state = byId.get(latest.parent_checkpoint?.checkpoint_id ?? ""); state; state = byId.get(state.parent_checkpoint?.checkpoint_id ?? ""))
    for (const node of state.next) ran.add(node);
  const settled = { ...nodeStatus };
  const approvals = { ...known };
  const timers = { ...knownTimers };
  const tools = { ...knownTools };
  // Interrupts pending on the newest checkpoint: the approvals, timers and MCP tasks the thread waits for.
  for (const task of latest.tasks)
    for (const item of task.interrupts) {
      const request = approvalRequest(item as unknown as Record<string, unknown>);
      if (request && !approvals[request.node]) approvals[request.node] = request;
      const timer = timerWait(item as unknown as Record<string, unknown>);
      if (timer) timers[timer.node] = timer.until;
      const tool = toolPark(item as unknown as Record<string, unknown>);
      if (tool) tools[tool.node] = tool.tool;
    }
  for (const node of Object.keys(settled)) {
    const task = latest.tasks.find((t) => t.name === node);
    // A task the run's cancel cut off ends with LangGraph's CancelledError: it did not fail.
    if (task?.error) settled[node] = /^CancelledError\b/.test(task.error) ? "stopped" : "failed";
    else if (task && task.interrupts.length > 0) settled[node] = "waiting";
    else if (ran.has(node) && !latest.next.includes(node)) settled[node] = settled[node] === "failed" ? "failed" : "done";
    else if (settled[node] === "running" && !latest.next.includes(node)) settled[node] = "done";
  }
  const waiting = Object.values(settled).includes("waiting");
  const values = latest.values && !Array.isArray(latest.values) ? (publicState(latest.values) as Record<string, unknown>) : null;
  return {
    values,
    nodeStatus: settled,
    approvals: waiting ? approvals : {},
    timers: waiting ? timers : {},
    tools: waiting ? tools : {},
    ...(waiting && view.phase === "success" ? { phase: "waiting" as const } : {}),
  };
}

/** Attach the server's approval records to the waiting nodes (they carry the ids decisions need). */
export async function findApprovalIds(): Promise<void> {
  const { threadId, approvals: waiting } = useRunStore.getState();
  if (!threadId || Object.keys(waiting).length === 0) return;
  // The same request sets the top bar's count: a new approval is counted now, not at its next refresh.
  const pending = await pendingApprovals();
  for (const approval of pending) {
    if (approval.thread_id === threadId && waiting[approval.node]) useRunStore.getState().setApprovalId(approval.node, approval.approval_id);
  }
}

/**
 * Decide an approval and follow the run that resumes the thread. Without a
 * server record (no approval id), the decision is sent as `command.resume`.
 */
export async function decide(request: ApprovalRequest, decision: Decision): Promise<void> {
  const { threadId, assistantId } = useRunStore.getState();
  if (!threadId || !assistantId) throw new Error("no run is open");
  // The record may have been written after the stream ended: look once more.
  if (!request.approvalId) await findApprovalIds();
  const approvalId = useRunStore.getState().approvals[request.node]?.approvalId ?? request.approvalId;
  const signal = nextSignal();
  if (approvalId) {
    const result = await approvals.decide(approvalId, decision);
    useRunStore.getState().continueWith(null);
    const decided = result.approval as (typeof result.approval & { decided_by?: string | null; decided_at?: string | null }) | undefined;
    noteDecision({ plait_approval: { decision, decided_by: decided?.decided_by ?? decision.actor ?? null } }, decided?.decided_at ?? new Date().toISOString());
    const resumed = resumedRun(result) ?? (await newestActiveRun(threadId));
    if (!resumed) return;
    // Known before its first event: a stream that breaks at once is rejoined, not a failure.
    if (!signal.aborted) useRunStore.setState({ runId: resumed.run_id });
    await follow(runs.join(resumed.thread_id, resumed.run_id, signal, null, OWN_REJOINS), signal);
    return;
  }
  useRunStore.getState().continueWith(null);
  noteDecision({ plait_approval: { decision, decided_by: decision.actor ?? null } }, new Date().toISOString());
  const resume = request.interruptId ? { [request.interruptId]: decision } : decision;
  await follow(runs.stream(threadId, { assistant_id: assistantId, command: { resume }, stream_mode: RUN_STREAM_MODES }, signal, created(signal)), signal);
}

async function newestActiveRun(threadId: string): Promise<{ thread_id: string; run_id: string } | null> {
  const list = await runs.list(threadId);
  const active = list.filter((run) => run.status === "pending" || run.status === "running").sort((a, b) => b.created_at.localeCompare(a.created_at));
  return active[0] ?? null;
}

/**
 * A run that answers an approval carries the decision in its metadata
 * (`plait_approval`: decision, who decided): the timeline shows it before the run's steps.
 */
function decisionNote(metadata: Record<string, unknown> | undefined, at: string | null): Omit<TimelineNote, "kind" | "key" | "run"> | null {
  const approval = metadata?.plait_approval as { decision?: { decision?: string; comment?: string | null }; decided_by?: string | null } | undefined;
  if (!approval?.decision) return null;
  const what = approval.decision.decision ?? "decided";
  const who = approval.decided_by ? ` by ${approval.decided_by}` : "";
  const comment = approval.decision.comment ? `: “${approval.decision.comment}”` : "";
  return { type: "decision", text: `${what}${who}${comment}`, at, node: null, data: approval };
}

/** Note a decision in the shown run's timeline (see decisionNote). */
function noteDecision(metadata: Record<string, unknown> | undefined, at: string | null): void {
  const decided = decisionNote(metadata, at);
  if (decided) useRunStore.getState().note(decided);
}
