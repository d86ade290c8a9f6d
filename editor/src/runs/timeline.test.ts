import { describe, expect, it } from "vitest";
import {
  addEvent,
  EMPTY_TIMELINE,
  interruptWait,
  nextRun,
  parkedSince,
  runSpan,
  stepsOf,
  type RunEvent,
  type Timeline,
  type TimelineNote,
  type TimelineStep,
} from "./timeline";

function step(node: string, startedAt: string, endedAt: string): TimelineStep {
  return {
    ...({} as TimelineStep),
    kind: "step",
    key: node,
    node,
    startedAt,
    endedAt,
    status: "done",
  };
}

function note(at: string): TimelineNote {
  return { kind: "note", key: at, type: "timer", text: "hold waits", at, run: 1, node: "hold", data: null } as TimelineNote;
}

describe("runSpan", () => {
  it("counts a wait before a step through its note", () => {
    // A step known only from :39 (its first start not streamed); the note says the wait began at :35.
    const timeline: Timeline = {
      ...EMPTY_TIMELINE,
      entries: [note("2026-12-03T16:10:35.858Z"), step("hold", "2026-12-03T16:10:39.900Z", "2026-12-03T16:10:39.901Z")],
    };
    expect(runSpan(timeline)).toEqual({ startedAt: "2026-12-03T16:10:35.858Z", endedAt: "2026-12-03T16:10:39.901Z" });
  });

  it("is nothing for a timeline with no times", () => {
    expect(runSpan(EMPTY_TIMELINE)).toEqual({ startedAt: null, endedAt: null });
  });
});

describe("a step a resume re-enters", () => {
  // A `wait` node as the journal has it: parked at :35.100, its timer's resume run re-enters it at :37.600.
  const until = "2026-12-03T16:10:37.100Z";
  const parked: RunEvent[] = [
    { event: "metadata", data: { run_id: "r1", attempt: 1 } },
    { event: "debug", data: { type: "task", step: 1, timestamp: "2026-12-03T16:10:35.100Z", payload: { id: "t1", name: "hold", input: {} } } },
    {
      event: "debug",
      data: {
        type: "task_result",
        step: 1,
        timestamp: "2026-12-03T16:10:35.104Z",
        payload: { id: "t1", name: "hold", result: [], interrupts: [{ id: "i1", value: { kind: "wait", node: "hold", until } }] },
      },
    },
    { event: "updates", data: { __interrupt__: [{ id: "i1", value: { kind: "wait", node: "hold", until } }] }, at: "2026-12-03T16:10:35.110Z" },
  ];
  const resumed: RunEvent[] = [
    { event: "metadata", data: { run_id: "r2", attempt: 1 } },
    { event: "debug", data: { type: "task", step: 1, timestamp: "2026-12-03T16:10:37.600Z", payload: { id: "t2", name: "hold", input: {} } } },
    { event: "debug", data: { type: "task_result", step: 1, timestamp: "2026-12-03T16:10:37.603Z", payload: { id: "t2", name: "hold", result: [] } } },
    { event: "debug", data: { type: "task", step: 2, timestamp: "2026-12-03T16:10:37.610Z", payload: { id: "t3", name: "reply", input: {} } } },
    { event: "debug", data: { type: "task_result", step: 2, timestamp: "2026-12-03T16:10:37.650Z", payload: { id: "t3", name: "reply", result: [] } } },
  ];

  it("starts when the node first ran, not when the resume re-entered it", () => {
    let timeline = parked.reduce(addEvent, EMPTY_TIMELINE);
    timeline = resumed.reduce(addEvent, nextRun(timeline));
    const [hold, reply] = stepsOf(timeline);
    expect(hold.node).toBe("hold");
    expect(hold.visit).toBe(1);
    expect(hold.startedAt).toBe("2026-12-03T16:10:35.100Z");
    // Its duration is the whole step, the wait in it.
    expect(hold.durationMs).toBe(2503);
    expect(reply.startedAt).toBe("2026-12-03T16:10:37.610Z");
    expect(runSpan(timeline).startedAt).toBe("2026-12-03T16:10:35.100Z");
  });
});

describe("what a step's interrupt waits for", () => {
  it("tells a timer and an MCP task from a person's decision", () => {
    expect(interruptWait({ kind: "wait", node: "hold", until: "2026-12-03T16:10:37Z" })).toEqual({ kind: "timer", until: "2026-12-03T16:10:37Z" });
    expect(interruptWait({ plait: "mcp_task", node: "report", server: "demo", tool: "slow_report", task_id: "t1" })).toEqual({
      kind: "tool",
      tool: "demo/slow_report",
    });
    expect(interruptWait({ kind: "approval", node: "approve", action: "issue_refund" })).toEqual({ kind: "person" });
    // An MCP task's question is an approval: a person answers it.
    expect(interruptWait({ kind: "approval", node: "report", action: "demo/slow_report", arguments: {} })).toEqual({ kind: "person" });
  });
});

describe("a tool call parked on its MCP task", () => {
  const park = { id: "i1", value: { plait: "mcp_task", key: "k1", node: "report", server: "demo", tool: "slow_report", task_id: "t1" } };
  const call = { plait: "tool_call", node: "report", tool: "slow_report", args: { topic: "q" } };
  const parked: RunEvent[] = [
    { event: "debug", data: { type: "task", step: 1, timestamp: "2026-12-03T16:10:35.100Z", payload: { id: "t1", name: "report", input: {} } } },
    { event: "custom", data: { ...call, status: "started", reused: false } },
    {
      event: "debug",
      data: { type: "task_result", step: 1, timestamp: "2026-12-03T16:10:35.200Z", payload: { id: "t1", name: "report", result: [], interrupts: [park] } },
    },
    { event: "updates", data: { __interrupt__: [park] } },
  ];
  // The poller's resume run: the node runs again from its start and calls the tool again (the task's result).
  const resumed: RunEvent[] = [
    { event: "debug", data: { type: "task", step: 1, timestamp: "2026-12-03T16:10:45.000Z", payload: { id: "t2", name: "report", input: {} } } },
    { event: "custom", data: { ...call, status: "started", reused: false } },
    { event: "custom", data: { ...call, status: "ok", reused: false, result: { pages: 3 } } },
    { event: "debug", data: { type: "task_result", step: 1, timestamp: "2026-12-03T16:10:45.050Z", payload: { id: "t2", name: "report", result: [] } } },
  ];

  it("is still going while the run waits, not cut off", () => {
    const [step] = stepsOf(parked.reduce(addEvent, EMPTY_TIMELINE));
    expect(step.status).toBe("waiting");
    expect(step.toolCalls.map((c) => c.status)).toEqual(["started"]);
  });

  it("is one call once the resumed node made it again", () => {
    const [step] = stepsOf(resumed.reduce(addEvent, nextRun(parked.reduce(addEvent, EMPTY_TIMELINE))));
    expect(step.status).toBe("done");
    expect(step.toolCalls).toMatchObject([{ tool: "slow_report", status: "ok", result: { pages: 3 } }]);
  });
});

describe("a run that ends while a step runs", () => {
  const fold = (events: RunEvent[]) => events.reduce(addEvent, EMPTY_TIMELINE);
  const task = (id: string, name: string, timestamp: string, result?: Record<string, unknown>) => ({
    event: "debug",
    data: { type: result ? "task_result" : "task", timestamp, step: 1, payload: { id, name, input: {}, ...(result ?? {}) } },
  });

  it("was stopped (a cancel cut it off): the step ran until the end, its call got no result", () => {
    const timeline = fold([
      task("t1", "prep", "2026-12-04T10:00:00.000Z"),
      task("t1", "prep", "2026-12-04T10:00:00.004Z", { result: {}, interrupts: [] }),
      task("t2", "report", "2026-12-04T10:00:00.010Z"),
      { event: "custom", data: { plait: "tool_call", node: "report", tool: "slow_report", args: {}, status: "started" } },
      { event: "end", data: null, at: "2026-12-04T10:00:02.010Z" },
    ]);
    const [prep, report] = stepsOf(timeline);
    expect(prep.status).toBe("done");
    expect(report).toMatchObject({ status: "stopped", endedAt: "2026-12-04T10:00:02.010Z", durationMs: 2000 });
    expect(report.toolCalls.map((call) => call.status)).toEqual(["unfinished"]);
  });

  it("leaves a parked step waiting", () => {
    const parked = fold([
      task("t1", "hold", "2026-12-04T10:00:00.000Z"),
      task("t1", "hold", "2026-12-04T10:00:00.001Z", { result: {}, interrupts: [{ id: "i", value: { kind: "wait", node: "hold", until: "x" } }] }),
      { event: "end", data: null, at: "2026-12-04T10:00:00.002Z" },
    ]);
    expect(stepsOf(parked)[0].status).toBe("waiting");
  });
});

describe("parkedSince", () => {
  it("is when the newest interrupt came, else when the last step ended, else unknown", () => {
    const parked: Timeline = {
      ...EMPTY_TIMELINE,
      entries: [step("hold", "2026-12-03T16:10:35.000Z", "2026-12-03T16:10:35.004Z"), note("2026-12-03T16:10:35.010Z")],
    };
    expect(parkedSince(parked)).toBe("2026-12-03T16:10:35.010Z");
    const noted = { ...EMPTY_TIMELINE, entries: [step("hold", "2026-12-03T16:10:35.000Z", "2026-12-03T16:10:35.004Z")] };
    expect(parkedSince(noted)).toBe("2026-12-03T16:10:35.004Z");
    expect(parkedSince(EMPTY_TIMELINE)).toBeNull();
  });
});
