import { beforeEach, describe, expect, it, vi } from "vitest";
import { canRejoin, detach, forkRun, openThread, rejoinDelay, runStarted, settle } from "./runController";
import { shownState } from "./runStates";
import { useRunStore } from "./runStore";
import { useStartedRun } from "../graphs/runTarget";
import { ApiError } from "../api/errors";
import type { SseMessage } from "../api/sse";

// The server, as openThread reads it: a thread whose `wait` parked its first run and whose timer's run ended it.
// `stream`, `join` and `watch` stand for the run streams and the thread's event stream of each test.
const server = vi.hoisted(() => ({
  runs: [] as Record<string, unknown>[],
  events: {} as Record<string, { event: string; data: unknown; at: string | null; superseded?: boolean }[]>,
  stream: null as null | ((options: { onResponse?: (response: Response) => void }) => AsyncGenerator<SseMessage>),
  join: null as null | ((lastEventId: string | null, options: { onResponse?: (response: Response) => void }) => AsyncGenerator<SseMessage>),
  joined: [] as (string | null)[],
  watch: null as null | ((signal: AbortSignal) => AsyncGenerator<SseMessage>),
  rowFails: false,
}));
vi.mock("./runApi", () => ({
  runsOf: async () => server.runs,
  eventsOf: async (runId: string) => server.events[runId] ?? [],
  runOf: async (_thread: string, runId: string) => {
    if (server.rowFails) throw new TypeError("Failed to fetch");
    return server.runs.find((run) => run.run_id === runId);
  },
}));
vi.mock("../api/client", async () => ({
  ApiError: (await vi.importActual<typeof import("../api/errors")>("../api/errors")).ApiError,
  runOfResponse: (await vi.importActual<typeof import("../api/client")>("../api/client")).runOfResponse,
  threads: {
    history: async () => [],
    get: async () => ({ thread_id: "t1", status: "idle" }),
    events: (_thread: string, _channels: string[], signal: AbortSignal) => (server.watch ?? async function* () {})(signal),
  },
  runs: {
    list: async (_thread: string, limit = 50) => [...server.runs].reverse().slice(0, limit),
    stream: (_thread: string, _body: unknown, _signal: AbortSignal, options: { onResponse?: (response: Response) => void } = {}) => server.stream!(options),
    join: (_thread: string, _run: string, _signal: AbortSignal, lastEventId: string | null, options: { onResponse?: (response: Response) => void } = {}) => {
      server.joined.push(lastEventId);
      return server.join!(lastEventId, options);
    },
  },
  approvals: { list: async () => [] },
  resumedRun: () => null,
}));

/** The run line's words each store change would show, while `act` runs. */
async function linesWhile(act: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const unsubscribe = useRunStore.subscribe((s) => lines.push(shownState(s.phase, s.ended, s, s.lost).label));
  await act();
  unsubscribe();
  return lines;
}

/** A stream message as the server frames it. */
const sse = (event: string, data: unknown, id: string | null = null): SseMessage => ({ event, data, id });
const created = { headers: new Headers({ "Content-Location": "/threads/t2/runs/r9" }) } as Response;

describe("rejoining a broken stream", () => {
  it("rejoins at once, then less and less often, at most every 10 s", () => {
    expect([0, 1, 2, 3, 4, 5, 9].map(rejoinDelay)).toEqual([0, 1000, 2000, 4000, 8000, 10_000, 10_000]);
  });

  it("rejoins when the connection failed or the server was down, not when it refused", () => {
    expect(canRejoin(new TypeError("network error"))).toBe(true);
    expect(canRejoin(new ApiError(502, "bad gateway", null))).toBe(true);
    expect(canRejoin(new ApiError(503, "unavailable", null))).toBe(true);
    expect(canRejoin(new ApiError(404, "no such run", null))).toBe(false);
    expect(canRejoin(new ApiError(422, "invalid input", null))).toBe(false);
  });

  const done = { run_id: "r9", status: "success", created_at: "2026-12-03T14:00:00Z", assistant_id: "hold@1.0.0", metadata: {}, plait_state: "succeeded" };

  it("says the stream was lost, not that the run failed, and goes on from the last event it read", async () => {
    server.runs = [done];
    server.joined = [];
    server.stream = async function* ({ onResponse }) {
      onResponse?.(created);
      yield sse("metadata", { run_id: "r9" }, "1");
      yield sse("updates", { hold: { question: "q" } }, "2");
      throw new TypeError("network error");
    };
    let rejoins = 0;
    server.join = async function* (_lastEventId, { onResponse }) {
      rejoins += 1;
      // The server is still restarting on the first rejoin.
      if (rejoins === 1) throw new TypeError("Failed to fetch");
      onResponse?.(created);
      yield sse("updates", { reply: { answer: "a" } }, "3");
      yield sse("end", null, "4");
    };
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const lines = await linesWhile(async () => {
        const following = forkRun("t2", "hold@1.0.0", "c1", ["hold", "reply"], {});
        await vi.advanceTimersByTimeAsync(2000);
        await following;
      });
      expect(server.joined).toEqual(["2", "2"]);
      expect(lines).not.toContain("failed");
      const lost = lines.indexOf("lost the stream, reconnecting…");
      expect(lost).toBeGreaterThan(lines.indexOf("running"));
      expect(lines.slice(lost + 1)).toEqual(expect.arrayContaining(["running", "ended, reading the result…"]));
      expect(lines[lines.length - 1]).toBe("succeeded");
      expect(useRunStore.getState()).toMatchObject({ runId: "r9", lost: false, phase: "success", nodeStatus: { hold: "done", reply: "done" } });
    } finally {
      vi.useRealTimers();
    }
  });

  it("rejoins a server that answers and drops at once less and less often, not in a loop", async () => {
    server.runs = [done];
    server.joined = [];
    server.stream = async function* ({ onResponse }) {
      onResponse?.(created);
      yield sse("metadata", { run_id: "r9" }, "1");
      throw new TypeError("network error");
    };
    server.join = async function* (_lastEventId, { onResponse }) {
      onResponse?.(created);
      if (server.joined.length < 4) throw new TypeError("network error");
      yield sse("end", null, "2");
    };
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const following = forkRun("t2", "hold@1.0.0", "c1", ["hold"], {});
      const joinsAfter = async (ms: number) => (await vi.advanceTimersByTimeAsync(ms), server.joined.length);
      // At once, then after 1 s, 2 s and 4 s: the answers reset nothing.
      expect([await joinsAfter(0), await joinsAfter(999), await joinsAfter(1), await joinsAfter(1999), await joinsAfter(1)]).toEqual([1, 1, 2, 2, 3]);
      expect([await joinsAfter(3999), await joinsAfter(1)]).toEqual([3, 4]);
      await following;
      expect(useRunStore.getState()).toMatchObject({ lost: false, phase: "success" });
    } finally {
      vi.useRealTimers();
    }
  });

  it("rejoins a stream that closed without the run's end", async () => {
    server.runs = [done];
    server.joined = [];
    server.stream = async function* () {
      yield sse("metadata", { run_id: "r9" }, "1");
    };
    server.join = async function* () {
      yield sse("end", null, "2");
    };
    const lines = await linesWhile(() => forkRun("t2", "hold@1.0.0", "c1", ["hold"], {}));
    expect(server.joined).toEqual(["1"]);
    expect(lines).toContain("lost the stream, reconnecting…");
    expect(lines[lines.length - 1]).toBe("succeeded");
  });

  it("says the result could not be read when the run's row cannot be, not that it is still being read", async () => {
    server.runs = [done];
    server.rowFails = true;
    server.stream = async function* ({ onResponse }) {
      onResponse?.(created);
      yield sse("metadata", { run_id: "r9" }, "1");
      yield sse("end", null, "2");
    };
    try {
      const lines = await linesWhile(() => forkRun("t2", "hold@1.0.0", "c1", ["hold"], {}));
      expect(lines).toContain("ended, reading the result…");
      expect(lines[lines.length - 1]).toBe("ended; its result could not be read");
      expect(lines).not.toContain("succeeded");
      expect(useRunStore.getState().error).toBe("Failed to fetch; open the run again from Past runs to read it");
    } finally {
      server.rowFails = false;
    }
  });

  it("fails when the server refuses the run (it was never created)", async () => {
    server.stream = async function* () {
      yield* [];
      throw new ApiError(422, "the input is invalid", null);
    };
    const lines = await linesWhile(() => forkRun("t2", "hold@1.0.0", "c1", ["hold"], {}));
    expect(lines).not.toContain("lost the stream, reconnecting…");
    expect(lines[lines.length - 1]).toBe("failed");
  });
});

describe("watching a parked thread for the run that resumes it", () => {
  const lifecycle = (event: string) => sse("message", { type: "event", method: "lifecycle", params: { namespace: [], data: { event } } });

  it("reads a run's start from the thread's events", () => {
    expect(runStarted(lifecycle("started"))).toBe(true);
    expect(runStarted(lifecycle("interrupted"))).toBe(false);
    expect(runStarted(sse("message", { type: "event", method: "values", params: { namespace: [], data: {} } }))).toBe(false);
  });

  it("follows the run the server (or someone elsewhere) starts on the thread, whatever it waited for", async () => {
    const parked = {
      run_id: "p1",
      status: "success",
      created_at: "2026-12-03T14:00:00Z",
      assistant_id: "task@1.0.0",
      metadata: {},
      plait_state: "waiting_for_tool",
    };
    const resumed = { run_id: "p2", status: "success", created_at: "2026-12-03T14:00:05Z", assistant_id: "task@1.0.0", metadata: {}, plait_state: "succeeded" };
    server.runs = [parked];
    server.events = { p2: [sse("metadata", { run_id: "p2" }), sse("updates", { report: { report: {} } }), sse("end", null)].map((e) => ({ ...e, at: null })) };
    server.events.p1 = [
      { event: "metadata", data: { run_id: "p1" }, at: null },
      {
        event: "updates",
        data: { __interrupt__: [{ id: "i1", value: { plait: "mcp_task", node: "report", server: "demo", tool: "slow_report" } }] },
        at: null,
      },
      { event: "end", data: null, at: null },
    ];
    let resume = () => {};
    const resumes = new Promise<void>((resolve) => (resume = resolve));
    server.watch = async function* () {
      // The parked run's start, replayed first: nothing new.
      yield lifecycle("started");
      yield lifecycle("interrupted");
      await resumes;
      // The MCP task poller's run.
      server.runs = [parked, resumed];
      yield lifecycle("started");
    };
    server.stream = async function* () {
      yield sse("metadata", { run_id: "p1" }, "1");
      yield sse("updates", { __interrupt__: [{ id: "i1", value: { plait: "mcp_task", node: "report", server: "demo", tool: "slow_report" } }] }, "2");
      yield sse("end", null, "3");
    };
    await forkRun("t1", "task@1.0.0", "c1", ["report"], {});
    expect(shownState(useRunStore.getState().phase, useRunStore.getState().ended, useRunStore.getState())).toMatchObject({ state: "waiting_for_tool" });
    const lines: string[] = [];
    const unsubscribe = useRunStore.subscribe((s) => lines.push(shownState(s.phase, s.ended, s, s.lost).label));
    resume();
    await vi.waitFor(() => expect(useRunStore.getState().runId).toBe("p2"));
    unsubscribe();
    expect(useRunStore.getState()).toMatchObject({ phase: "success", tools: {}, nodeStatus: { report: "done" } });
    expect(lines).toEqual(["succeeded"]);
    server.watch = null;
  });
});

describe("opening a thread that exists", () => {
  const until = "2026-12-03T14:00:02Z";
  const parked = { run_id: "r1", status: "success", created_at: "2026-12-03T14:00:00Z", assistant_id: "hold@1.0.0", metadata: {} };
  const resumed = {
    run_id: "r2",
    status: "success",
    created_at: "2026-12-03T14:00:03Z",
    assistant_id: "hold@1.0.0",
    metadata: {},
    plait_state: "succeeded",
    plait_state_label: "succeeded",
  };
  beforeEach(() => {
    server.runs = [parked, resumed];
    server.events = events;
  });
  const events = {
    r1: [
      { event: "metadata", data: { run_id: "r1" }, at: null },
      { event: "updates", data: { __interrupt__: [{ id: "i1", value: { kind: "wait", node: "hold", until } }] }, at: null },
      { event: "end", data: null, at: null },
    ],
    r2: [
      { event: "metadata", data: { run_id: "r2" }, at: null },
      { event: "updates", data: { hold: {} }, at: null },
      { event: "updates", data: { reply: { answer: "done" } }, at: null },
      { event: "end", data: null, at: null },
    ],
  };

  it("keeps the thread on screen as shown until it is read whole, then shows how it ended", async () => {
    useRunStore.getState().begin("t1", "hold@1.0.0", ["hold", "reply"]);
    useRunStore.setState({ runId: "r1", phase: "waiting", timers: { hold: until }, nodeStatus: { hold: "waiting", reply: "pending" } });
    const lines = await linesWhile(() => openThread("t1", "hold@1.0.0", ["hold", "reply"]));
    expect(lines).toEqual(["succeeded"]);
    expect(useRunStore.getState()).toMatchObject({ runId: "r2", phase: "success", nodeStatus: { hold: "done", reply: "done" }, timers: {} });
  });

  it("says another thread is being read, never that it starts", async () => {
    useRunStore.getState().reset();
    const lines = await linesWhile(() => openThread("t1", "hold@1.0.0", ["hold", "reply"]));
    expect(lines).toEqual(["reading the run…", "succeeded"]);
  });

  it("says which version the run ran, or which draft, as its row says", async () => {
    server.runs = [parked, { ...resumed, plait_version: "1.2.0" }];
    await openThread("t1", "hold@1.0.0", ["hold", "reply"]);
    expect(useStartedRun.getState()).toMatchObject({ threadId: "t1", target: { label: "version 1.2.0", draft: null } });

    const draft = { digest: "sha256:1a2b3c4d5e6f", version: "1.2.1-draft" };
    server.runs = [parked, { ...resumed, plait_version: "1.2.1-draft", metadata: { plait_draft: draft } }];
    await openThread("t1", "hold@1.0.0", ["hold", "reply"]);
    expect(useStartedRun.getState().target).toMatchObject({ label: "the unsaved draft (1a2b3c4d)", draft });
  });
});

describe("a hidden page", () => {
  it("holds no watch of the thread: it opens it when shown, and closes it when hidden", async () => {
    const doc = Object.assign(new EventTarget(), { visibilityState: "hidden" as DocumentVisibilityState });
    const show = (state: DocumentVisibilityState) => {
      doc.visibilityState = state;
      doc.dispatchEvent(new Event("visibilitychange"));
    };
    vi.stubGlobal("document", doc);
    const opened: AbortSignal[] = [];
    server.watch = async function* (signal) {
      opened.push(signal);
      // An open stream with nothing new: until the page closes it.
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
      yield* [];
    };
    server.runs = [
      { run_id: "h1", status: "success", created_at: "2026-12-03T14:00:00Z", assistant_id: "task@1.0.0", metadata: {}, plait_state: "waiting_for_tool" },
    ];
    server.stream = async function* () {
      yield sse("metadata", { run_id: "h1" }, "1");
      yield sse("updates", { __interrupt__: [{ id: "i1", value: { plait: "mcp_task", node: "report", server: "demo", tool: "slow_report" } }] }, "2");
      yield sse("end", null, "3");
    };
    try {
      await forkRun("t1", "task@1.0.0", "c1", ["report"], {});
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(opened).toHaveLength(0);
      show("visible");
      await vi.waitFor(() => expect(opened).toHaveLength(1));
      show("hidden");
      await vi.waitFor(() => expect(opened[0].aborted).toBe(true));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(opened).toHaveLength(1);
      show("visible");
      await vi.waitFor(() => expect(opened).toHaveLength(2));
    } finally {
      detach();
      vi.unstubAllGlobals();
      server.watch = null;
    }
  });
});

describe("settling a cancelled run from its checkpoints", () => {
  const state = (next: string[], tasks: { name: string; error?: string | null }[], id: string, parent: string | null) => ({
    values: {},
    next,
    checkpoint: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id },
    parent_checkpoint: parent ? { thread_id: "t", checkpoint_ns: "", checkpoint_id: parent } : null,
    metadata: null,
    created_at: null,
    tasks: tasks.map((task) => ({ id: `${id}-${task.name}`, interrupts: [], ...task })),
  });

  it("reads the node the cancel cut off as stopped, one that raised as failed", () => {
    const history = [state(["report"], [{ name: "report", error: "CancelledError()" }], "c2", "c1"), state(["prep"], [{ name: "prep" }], "c1", null)];
    const view = { nodeStatus: { prep: "done" as const, report: "running" as const }, approvals: {}, timers: {}, tools: {}, phase: "success" as const };
    expect(settle(view, history).nodeStatus).toEqual({ prep: "done", report: "stopped" });
    // The outcome's values are the thread's newest state, without its private channels.
    expect(settle(view, [{ ...history[0], values: { report: null, topic: "q", __visits: { prep: 1 } } }, history[1]]).values).toEqual({
      report: null,
      topic: "q",
    });
    const raised = [state(["report"], [{ name: "report", error: "ValueError('no such topic')" }], "c2", "c1"), history[1]];
    expect(settle(view, raised).nodeStatus).toEqual({ prep: "done", report: "failed" });
  });
});
