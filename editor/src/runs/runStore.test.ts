import { describe, expect, it } from "vitest";
import { approvalRequest, lossLines, reduce, runLines, shownStatus, timerWait, toolPark, waitingLines } from "./runStore";
import { soon, when } from "./format";
import { EMPTY_TIMELINE, nextRun, stepsOf, takenEdges, waitingText } from "./timeline";
import plannerTeam from "./fixtures/planner-team.json";
import refundResume from "./fixtures/refund-resume.json";

type Snap = Parameters<typeof reduce>[0];
interface RecordedRun {
  run_id: string;
  events: { event: string; data: unknown; at: string }[];
}

function initial(nodes: string[]): Snap {
  return {
    runId: null,
    phase: "starting",
    error: null,
    nodeStatus: Object.fromEntries(nodes.map((node) => [node, "pending" as const])),
    tokens: {},
    steps: [],
    approvals: {},
    timers: {},
    tools: {},
    log: [],
    timeline: EMPTY_TIMELINE,
    updatedSince: [],
  };
}

function run(events: [string, unknown][], state: Snap = initial(["assess", "approve", "refund"])): Snap {
  for (const [event, data] of events) state = { ...state, ...reduce(state, { event, data, id: null }) };
  return state;
}

/** Replay recorded runs of one thread as the editor does when it opens a past run. */
function replay(runs: RecordedRun[], nodes: string[]): Snap {
  let state = initial(nodes);
  runs.forEach((recorded, i) => {
    if (i > 0) state = { ...state, phase: "running", approvals: {}, timeline: nextRun(state.timeline), updatedSince: [] };
    for (const event of recorded.events) state = { ...state, ...reduce(state, { ...event, id: null }) };
  });
  return state;
}

describe("run reducer", () => {
  it("tracks node status from tasks events and parks on an approval interrupt", () => {
    const state = run([
      ["metadata", { run_id: "r1" }],
      ["tasks", { id: "t1", name: "assess", input: {} }],
      ["updates", { assess: { amount: 180 } }],
      ["tasks", { id: "t1", name: "assess", result: {}, error: null, interrupts: [] }],
      ["values", { amount: 180 }],
      ["tasks", { id: "t2", name: "approve", input: {} }],
      [
        "updates",
        {
          __interrupt__: [
            {
              id: "i1",
              value: { kind: "approval", node: "approve", action: "issue_refund", arguments: { amount: 180 }, reason: "high", expires_at: null },
            },
          ],
        },
      ],
      ["end", null],
    ]);
    expect(state.runId).toBe("r1");
    expect(state.nodeStatus).toEqual({ assess: "done", approve: "waiting", refund: "pending" });
    expect(state.approvals.approve).toMatchObject({ interruptId: "i1", action: "issue_refund", arguments: { amount: 180 } });
    expect(state.phase).toBe("waiting");
    expect(state.steps).toEqual([{ step: 1, after: ["assess"], values: { amount: 180 } }]);
  });

  it("lists each state of a run that streams values alone as a step, and a repeat of the state as none", () => {
    const state = run([
      ["metadata", { run_id: "r1" }],
      ["values", { text: "hi" }],
      ["values", { text: "hi", clean: "hi" }],
      ["values", { text: "hi", clean: "hi", summary: "greeting" }],
      // The state again (an interrupt's repeat, a resume's start): not a step.
      ["values", { text: "hi", clean: "hi", summary: "greeting" }],
      ["end", null],
    ]);
    expect(state.steps.map((step) => [step.step, step.after, Object.keys(step.values)])).toEqual([
      [1, [], ["text"]],
      [2, [], ["text", "clean"]],
      [3, [], ["text", "clean", "summary"]],
    ]);
  });

  it("does not count a resume's starting state as a step of a run that names its steps", () => {
    const state = run([
      ["values", { amount: 180 }],
      ["updates", { assess: { risk: "high" } }],
      ["values", { amount: 180, risk: "high" }],
      // The resume starts from the parked state with the decision in it: no node wrote it.
      ["values", { amount: 180, risk: "high", decision: "approve" }],
      ["updates", { refund: { refunded: true } }],
      ["values", { amount: 180, risk: "high", decision: "approve", refunded: true }],
    ]);
    expect(state.steps.map((step) => [step.step, step.after])).toEqual([
      [1, []],
      [2, ["assess"]],
      [3, ["refund"]],
    ]);
  });

  it("streams tokens into the node named by the message metadata and fails running nodes on error", () => {
    const state = run([
      ["tasks", { id: "t1", name: "assess", input: {} }],
      ["messages", [{ content: "Hel" }, { langgraph_node: "assess" }]],
      ["messages", [{ content: [{ type: "text", text: "lo" }] }, { langgraph_node: "assess" }]],
      ["error", { error: "NodeError", message: "boom" }],
    ]);
    expect(state.tokens.assess).toBe("Hello");
    expect(state.nodeStatus.assess).toBe("failed");
    expect(state.phase).toBe("error");
    expect(state.error).toBe("NodeError: boom");
  });
});

describe("state steps after a resume", () => {
  const state = replay(refundResume as RecordedRun[], ["assess", "approve", "refund", "decline"]);

  it("labels each state by the node that wrote it, once", () => {
    // Checkpoints of the thread: the input, then after assess, approve and refund.
    expect(state.steps.map((step) => step.after)).toEqual([[], ["assess"], ["approve"], ["refund"]]);
    expect(state.steps.map((step) => step.step)).toEqual([1, 2, 3, 4]);
    expect(state.steps[3].values.outcome).toBe("refunded 180 to grace@example.com");
  });
});

describe("timeline", () => {
  it("lists every step of planner-team with its duration, tokens and tool calls", () => {
    const state = replay(plannerTeam as RecordedRun[], ["planner", "executor", "reviewer"]);
    const steps = stepsOf(state.timeline);
    expect(steps.map((step) => `${step.node}#${step.visit}`)).toEqual(["planner#1", "executor#1", "reviewer#1", "executor#2", "reviewer#2"]);
    // Start and end are the engine's own times of each task (debug mode), not when events were written.
    const debug = (plannerTeam as RecordedRun[])[0].events
      .map((e) => e.data as { type?: string; timestamp?: string })
      .filter((d) => d?.type === "task" || d?.type === "task_result");
    expect(steps.flatMap((step) => [step.startedAt, step.endedAt])).toEqual(debug.map((d) => d.timestamp));
    for (const step of steps) {
      expect(step.status).toBe("done");
      expect(step.durationMs).not.toBeNull();
      expect(step.durationMs).toBe(Date.parse(step.endedAt as string) - Date.parse(step.startedAt as string));
      expect(step.tokensIn + step.tokensOut).toBeGreaterThan(0);
    }
    const first = steps[1];
    expect(first.toolCalls.map((call) => `${call.tool}:${call.status}`)).toEqual(["estimate_tasks:ok", "schedule:ok"]);
    expect(first.input).toMatchObject({ goal: "Ship the CSV export feature" });
    expect(first.input).not.toHaveProperty("__visits");
    expect(steps[2].output).toEqual({ review: { verdict: "revise", feedback: "Add a buffer of 2 days for review and QA." }, revisions: 1 });
    expect(state.timeline.visits).toEqual({ planner: 1, executor: 2, reviewer: 2 });
  });

  it("keeps an approval node's resumed execution as its one visit, with the decision as output", () => {
    const state = replay(refundResume as RecordedRun[], ["assess", "approve", "refund", "decline"]);
    const steps = stepsOf(state.timeline);
    expect(steps.map((step) => step.node)).toEqual(["assess", "approve", "refund"]);
    const approve = steps[1];
    expect(approve.status).toBe("done");
    expect(approve.output).toMatchObject({ decision: { decision: "approve" }, approved_amount: 180 });
    expect(approve.interrupt).toMatchObject({ action: "issue_refund" });
    expect(state.timeline.entries.filter((e) => e.kind === "note").map((e) => e.type)).toEqual(["approval"]);
    expect(steps[2].toolCalls).toEqual([{ tool: "issue_refund", args: { amount: 180, order_id: "A-1002" }, status: "ok", error: null, reused: false }]);
  });

  it("marks a takeover, retries with their error class, map progress and budget cost", () => {
    const state = run(
      [
        ["metadata", { run_id: "r1", attempt: 1 }],
        ["tasks", { id: "t1", name: "fetch", input: { q: 1 } }],
        ["custom", { plait: "retry", target: "fetch", attempt: 1, error_class: "timeout", delay: 0.5, error: "slow" }],
        ["custom", { plait: "budget", node: "fetch", usage: { cost: 0.25 }, limits: {} }],
        ["metadata", { run_id: "r1", attempt: 2 }],
        ["tasks", { id: "t1", name: "fetch", result: { a: 1 }, error: null, interrupts: [] }],
        ["tasks", { id: "t2", name: "each", input: {} }],
        ["custom", { plait: "tool_call", node: "each", tool: "look", args: { q: "a" }, status: "started", reused: false }],
        ["custom", { plait: "tool_call", node: "each", tool: "look", args: { q: "b" }, status: "started", reused: false }],
        ["custom", { plait: "tool_call", node: "each", tool: "look", args: { q: "c" }, status: "started", reused: false }],
        ["custom", { plait: "tool_call", node: "each", tool: "look", args: { q: "a" }, status: "ok", reused: false, result: { found: 2 } }],
        ["custom", { plait: "map_item", node: "each", index: 0, ok: true }],
        ["custom", { plait: "map_item", node: "each", index: 2, ok: false }],
        ["custom", { plait: "map_item", node: "each", index: 1, ok: false }],
        ["custom", { plait: "tool_call", node: "each", tool: "look", args: { q: "b" }, status: "error", error: "E: no", reused: false }],
        ["custom", { plait: "budget", node: "each", usage: { cost: 0.4 }, limits: {} }],
        ["tasks", { id: "t2", name: "each", result: { results: ["x", "y"] }, error: null, interrupts: [] }],
      ],
      initial(["fetch", "each"]),
    );
    const steps = stepsOf(state.timeline);
    expect(steps[0].retries).toEqual([{ target: "fetch", attempt: 1, errorClass: "timeout", delay: 0.5, error: "slow" }]);
    expect(steps[0].cost).toBe(0.25);
    expect(steps[1].cost).toBeCloseTo(0.15);
    expect(steps[1].attempt).toBe(2);
    expect(steps[1].map).toEqual({ done: 1, failed: 2, failedItems: [1, 2], total: 3 });
    // The map's card says what it lost once it is done (not while it runs, nor for a node that lost none).
    expect(lossLines(state.timeline)).toEqual({ each: "2 of 3 items lost" });
    expect(runLines({}, { fetch: "done", each: "done" }, {}, {}, {}, lossLines(state.timeline))).toEqual({ each: "2 of 3 items lost" });
    expect(runLines({}, { fetch: "done", each: "running" }, {}, {}, {}, lossLines(state.timeline))).toEqual({});
    // Parallel calls of one tool: each result goes to the call with its arguments.
    expect(steps[1].toolCalls.map((call) => `${JSON.stringify(call.args)}:${call.status}`)).toEqual([
      '{"q":"a"}:ok',
      '{"q":"b"}:error',
      '{"q":"c"}:unfinished',
    ]);
    // A call's result comes with its `ok`; an error or an unfinished call has none.
    expect(steps[1].toolCalls.map((call) => call.result)).toEqual([{ found: 2 }, undefined, undefined]);
    const notes = state.timeline.entries.filter((e) => e.kind === "note");
    expect(notes.map((note) => note.type)).toEqual(["attempt"]);
  });

  it("shows what a tool call waits for under the tool's limits, on the card and in the step", () => {
    const waiting = {
      plait: "tool_waiting",
      node: "fan",
      tool: "search",
      key: "tool:research:search",
      reason: "concurrency",
      limit: { concurrency: 4 },
      wait: 30,
    };
    const started = { plait: "tool_call", node: "fan", tool: "search", args: { q: "a" }, status: "started", reused: false };
    const midway = run(
      [
        ["metadata", { run_id: "r1", attempt: 1 }],
        ["tasks", { id: "t1", name: "fan", input: {} }],
        ["custom", started],
        ["custom", waiting],
      ],
      initial(["fan"]),
    );
    const [step] = stepsOf(midway.timeline);
    expect(step.waits).toBe(1);
    expect(step.waiting && waitingText(step.waiting)).toBe("waiting for a slot of tool search (4 at once across all runs)");
    expect(runLines(midway.tokens, midway.nodeStatus, waitingLines(midway.timeline))).toEqual({ fan: "waits: search slot" });

    const done = run([["custom", { ...started, status: "ok", result: 1 }]], midway);
    expect(stepsOf(done.timeline)[0]).toMatchObject({ waiting: null, waits: 1 });
    expect(waitingLines(done.timeline)).toEqual({});
    const paused = run([["custom", { ...waiting, reason: "paused", limit: {}, retry_in: 1.5 }]], done);
    const pausedStep = stepsOf(paused.timeline)[0];
    expect(pausedStep.waiting && waitingText(pausedStep.waiting)).toBe("waiting: tool search is paused for 1.5s more");
  });

  it("notes each model route an agent takes, and its way back", () => {
    const state = run(
      [
        ["tasks", { id: "t1", name: "work", input: {} }],
        ["custom", { plait: "model_route", node: "work", model: "strong", when: "state.risk == 'high'" }],
        ["custom", { plait: "model_route", node: "work", model: "small", when: null }],
      ],
      initial(["work"]),
    );
    const notes = state.timeline.entries.filter((e) => e.kind === "note");
    expect(notes.map((note) => note.kind === "note" && [note.type, note.text])).toEqual([
      ["route", "work calls strong: state.risk == 'high'"],
      ["route", "work calls small (its own model again)"],
    ]);
  });

  it("finds the edges the run took, START to END, a loop's back edge included", () => {
    const state = replay(plannerTeam as RecordedRun[], ["planner", "executor", "reviewer"]);
    const edges = [
      { id: "e0", source: "START", target: "planner" },
      { id: "e1", source: "planner", target: "executor" },
      { id: "e2", source: "executor", target: "reviewer" },
      { id: "e3:route:approve", source: "reviewer", target: "END" },
      { id: "e3:route:revise", source: "reviewer", target: "executor" },
      { id: "e9", source: "planner", target: "reviewer" },
    ];
    expect(takenEdges(state.timeline, edges, true)).toEqual(["e0", "e1", "e2", "e3:route:approve", "e3:route:revise"]);
    expect(takenEdges(state.timeline, edges, false)).not.toContain("e3:route:approve");
  });
});

describe("canvas statuses", () => {
  it("reads skipped for nodes a finished run never reached, not while it waits", () => {
    const state = replay(refundResume as RecordedRun[], ["assess", "approve", "refund", "decline"]);
    expect(shownStatus(state.nodeStatus, "success")).toEqual({ assess: "done", approve: "done", refund: "done", decline: "skipped" });
    expect(shownStatus({ assess: "done", approve: "waiting", decline: "pending" }, "waiting")).toEqual({
      assess: "done",
      approve: "waiting",
      decline: "pending",
    });
    expect(shownStatus({ a: "failed", b: "pending" }, "error")).toEqual({ a: "failed", b: "skipped" });
  });

  it("gives a running node one line: the tail of its tokens, whitespace folded", () => {
    const long = `${"x".repeat(60)}\nlast  words`;
    expect(runLines({ a: "Plan:\n1. fetch", b: long, c: "finished", d: "" }, { a: "running", b: "running", c: "done", d: "running" })).toEqual({
      a: "Plan: 1. fetch",
      b: `…${"x".repeat(36)} last words`,
    });
  });

  it("counts each node's visits, a resumed approval once", () => {
    const state = replay(refundResume as RecordedRun[], ["assess", "approve", "refund", "decline"]);
    expect(state.timeline.visits).toEqual({ assess: 1, approve: 1, refund: 1 });
  });
});

describe("a wait node parked on its timer", () => {
  const until = "2026-12-03T15:00:00+00:00";
  const parked: [string, unknown][] = [
    ["metadata", { run_id: "r1" }],
    ["updates", { prepare: { steps: ["prepare"] } }],
    ["updates", { __interrupt__: [{ id: "i1", value: { kind: "wait", node: "pause", until } }] }],
    ["end", null],
  ];

  it("waits until its time, with no approval card", () => {
    const state = run(parked, initial(["prepare", "pause", "done"]));
    expect(state.phase).toBe("waiting");
    expect(state.timers).toEqual({ pause: until });
    expect(state.approvals).toEqual({});
    expect(state.nodeStatus).toMatchObject({ prepare: "done", pause: "waiting", done: "pending" });
  });

  it("says on its card until when, in local time", () => {
    const state = run(parked, initial(["prepare", "pause", "done"]));
    expect(runLines(state.tokens, state.nodeStatus, {}, state.timers)).toEqual({ pause: `until ${soon(until)}` });
    // Once resumed (running again, or done) the line goes.
    expect(runLines({}, { pause: "done" }, {}, state.timers)).toEqual({});
  });

  it("notes in the timeline until when it waits, not an approval", () => {
    const state = run(parked, initial(["prepare", "pause", "done"]));
    const notes = state.timeline.entries.filter((entry) => entry.kind === "note" && entry.node === "pause");
    expect(notes.map((note) => (note.kind === "note" ? [note.type, note.text] : null))).toEqual([["timer", `pause waits until ${soon(until)}`]]);
  });

  it("writes the time in the timeline as on the run line and the card: a time of day today, no date", () => {
    const today = new Date();
    today.setHours(23, 59, 58, 0);
    const later = today.toISOString();
    const parkedToday: [string, unknown][] = [
      ["metadata", { run_id: "r1" }],
      ["updates", { __interrupt__: [{ id: "i1", value: { kind: "wait", node: "pause", until: later } }] }],
      ["end", null],
    ];
    const state = run(parkedToday, initial(["pause"]));
    const [note] = state.timeline.entries.filter((entry) => entry.kind === "note");
    const line = runLines(state.tokens, state.nodeStatus, {}, state.timers).pause;
    expect(line).toMatch(/^until \d\d:\d\d:\d\d$/);
    expect(note.kind === "note" && note.text).toBe(`pause waits ${line}`);
  });

  it("says a time today without its date", () => {
    const now = new Date(2026, 11, 3, 12, 0, 0);
    expect(soon(new Date(2026, 11, 3, 14, 40, 56).toISOString(), now)).not.toContain("Dec");
    expect(soon(new Date(2026, 11, 4, 9, 0, 0).toISOString(), now)).toBe(when(new Date(2026, 11, 4, 9, 0, 0).toISOString()));
  });

  it("is told apart from other interrupts", () => {
    const wait = { id: "i1", value: { kind: "wait", node: "pause", until } };
    expect(timerWait(wait)).toEqual({ node: "pause", until });
    expect(approvalRequest(wait)).toBeNull();
    expect(timerWait({ id: "i2", value: { kind: "approval", node: "approve", action: "ship" } })).toBeNull();
    expect(timerWait({ id: "i3", value: { kind: "wait", node: "pause" } })).toBeNull();
  });
});

describe("a tool call parked on its MCP task", () => {
  // What engine/tools/mcp/tool.py interrupts with: the server's poller resumes the run, nobody is asked.
  const park = { id: "i1", value: { plait: "mcp_task", key: "k1", node: "report", server: "demo", tool: "slow_report", task_id: "t1" } };
  const parked: [string, unknown][] = [
    ["metadata", { run_id: "r1" }],
    ["updates", { __interrupt__: [park] }],
    ["end", null],
  ];

  it("waits for the tool, with no approval card", () => {
    const state = run(parked, initial(["report"]));
    expect(state.phase).toBe("waiting");
    expect(state.tools).toEqual({ report: "demo/slow_report" });
    expect(state.approvals).toEqual({});
    expect(state.nodeStatus).toEqual({ report: "waiting" });
    expect(runLines(state.tokens, state.nodeStatus, {}, state.timers, state.tools)).toEqual({ report: "for demo/slow_report" });
  });

  it("notes in the timeline which tool it waits for, not an approval", () => {
    const state = run(parked, initial(["report"]));
    const notes = state.timeline.entries.filter((entry) => entry.kind === "note");
    expect(notes.map((note) => (note.kind === "note" ? [note.type, note.text] : null))).toEqual([["tool", "report waits for demo/slow_report (an MCP task)"]]);
  });

  it("is told apart from an MCP task's question, which is an approval", () => {
    expect(toolPark(park)).toEqual({ node: "report", tool: "demo/slow_report" });
    expect(approvalRequest(park)).toBeNull();
    const question = { id: "i2", value: { kind: "approval", node: "report", action: "demo/slow_report", arguments: { answer: "" } } };
    expect(toolPark(question)).toBeNull();
    expect(approvalRequest(question)).toMatchObject({ node: "report", action: "demo/slow_report" });
  });
});
