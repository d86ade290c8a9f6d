import { describe, expect, it, vi } from "vitest";
import { nextTimerPoll, openThread } from "./runController";
import { shownState } from "./runStates";
import { useRunStore } from "./runStore";

describe("following a thread parked on wait timers", () => {
  const now = Date.parse("2026-12-03T14:00:00Z");

  it("looks at the earliest time, and every few seconds before it", () => {
    expect(nextTimerPoll({ pause: "2026-12-03T14:00:02Z" }, now)).toBe(2000);
    expect(nextTimerPoll({ a: "2026-12-03T15:00:00Z", b: "2026-12-03T14:00:03Z" }, now)).toBe(3000);
    expect(nextTimerPoll({ pause: "2026-12-03T15:00:00Z" }, now)).toBe(5000);
  });

  it("looks every second once the time has passed (the timer fires within it)", () => {
    expect(nextTimerPoll({ pause: "2026-12-03T13:59:00Z" }, now)).toBe(1000);
  });

  it("does not look without a timer", () => {
    expect(nextTimerPoll({}, now)).toBeNull();
    expect(nextTimerPoll({ pause: "not a time" }, now)).toBeNull();
  });
});

// The server, as openThread reads it: a thread whose `wait` parked its first run and whose timer's run ended it.
const server = vi.hoisted(() => ({
  runs: [] as Record<string, unknown>[],
  events: {} as Record<string, { event: string; data: unknown; at: string | null; superseded?: boolean }[]>,
}));
vi.mock("./runApi", () => ({
  runsOf: async () => server.runs,
  eventsOf: async (runId: string) => server.events[runId] ?? [],
  runOf: async (_thread: string, runId: string) => server.runs.find((run) => run.run_id === runId),
}));
vi.mock("../api/client", () => ({
  threads: { history: async () => [], get: async () => ({ thread_id: "t1", status: "idle" }) },
  runs: { list: async () => server.runs },
  approvals: { list: async () => [] },
  resumedRun: () => null,
}));

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
  server.runs = [parked, resumed];
  server.events = {
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

  /** The run line's words each store change would show, while `act` runs. */
  async function linesWhile(act: () => Promise<void>): Promise<string[]> {
    const lines: string[] = [];
    const unsubscribe = useRunStore.subscribe((s) => lines.push(shownState(s.phase, s.ended, s).label));
    await act();
    unsubscribe();
    return lines;
  }

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
});
