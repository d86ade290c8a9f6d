import { describe, expect, it } from "vitest";
import type { StateTask, ThreadState } from "../api/client";
import { hasSteps, historySteps } from "./historySteps";
import { addEvent, EMPTY_TIMELINE, nextRun, stepsOf, type RunEvent, type Timeline } from "./timeline";

const FIRST = "run-1";
const RESUME = "run-2";
const ASK = { kind: "approval", node: "approve", action: "issue_refund", arguments: { order_id: "A-1", amount: 180 } };

function checkpoint(id: string, runId: string, at: string, values: Record<string, unknown>, tasks: StateTask[]): ThreadState {
  return {
    values,
    next: tasks.map((task) => task.name),
    checkpoint: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id },
    metadata: { run_id: runId, source: "loop" },
    created_at: at,
    parent_checkpoint: null,
    tasks,
  };
}

// The refund graph as `GET /threads/{id}/history` gave it (newest first): the first run
// assessed and parked on the approval, the resume run approved with an edit and refunded.
const HISTORY: ThreadState[] = [
  checkpoint("c4", RESUME, "2026-12-04T21:18:19.166Z", { outcome: "refunded 90" }, []),
  checkpoint("c3", RESUME, "2026-12-04T21:18:19.136Z", { decision: { decision: "edit" } }, [
    { id: "t-refund", name: "refund", interrupts: [], error: null, result: { outcome: "refunded 90" } },
  ]),
  checkpoint("c2", FIRST, "2026-12-04T21:18:16.639Z", { assessment: { risk: "high" }, __visits: {} }, [
    { id: "t-approve", name: "approve", interrupts: [{ value: ASK }], error: null, result: { decision: { decision: "edit" } } },
  ]),
  checkpoint("c1", FIRST, "2026-12-04T21:18:16.631Z", { order_id: "A-1" }, [
    { id: "t-assess", name: "assess", interrupts: [], error: null, result: { assessment: { risk: "high" } } },
  ]),
  checkpoint("c0", FIRST, "2026-12-04T21:18:16.630Z", {}, [{ id: "t-start", name: "__start__", interrupts: [], error: null, result: { order_id: "A-1" } }]),
];

function fold(timeline: Timeline, events: RunEvent[]): Timeline {
  return events.reduce(addEvent, timeline);
}

describe("historySteps", () => {
  it("tells each run's steps from the checkpoints it wrote, a parked step resumed by the next run", () => {
    const first = fold(EMPTY_TIMELINE, historySteps(HISTORY, FIRST, "2026-12-04T21:18:16.610Z"));
    expect(stepsOf(first).map((step) => [step.node, step.status])).toEqual([
      ["assess", "done"],
      ["approve", "waiting"],
    ]);
    const [assess, parked] = stepsOf(first);
    expect(assess.input).toEqual({ order_id: "A-1" });
    expect(assess.output).toEqual({ assessment: { risk: "high" } });
    expect(assess.durationMs).toBe(8);
    expect(parked.interrupt).toEqual(ASK);
    // Plait's private channels are not what a node read.
    expect(parked.input).toEqual({ assessment: { risk: "high" } });

    const both = fold(nextRun(first), historySteps(HISTORY, RESUME, "2026-12-04T21:18:19.104Z"));
    expect(stepsOf(both).map((step) => [step.node, step.status, step.run])).toEqual([
      ["assess", "done", first.run],
      ["approve", "done", first.run + 1],
      ["refund", "done", first.run + 1],
    ]);
    const [, approved, refund] = stepsOf(both);
    // The approval's step began when it first ran, and ended when the resume's checkpoint was written.
    expect(approved.startedAt).toBe("2026-12-04T21:18:16.639Z");
    expect(approved.endedAt).toBe("2026-12-04T21:18:19.136Z");
    expect(approved.output).toEqual({ decision: { decision: "edit" } });
    expect(refund.output).toEqual({ outcome: "refunded 90" });
  });

  it("gives a run's failed task its error, and nothing for a task that never ran", () => {
    const failed: ThreadState[] = [
      checkpoint("c1", FIRST, "2026-12-04T10:00:01.000Z", { order_id: "A-1" }, [
        { id: "t-assess", name: "assess", interrupts: [], error: "ValueError: no such order", result: null },
        { id: "t-other", name: "notify", interrupts: [], error: null, result: null },
      ]),
      checkpoint("c0", FIRST, "2026-12-04T10:00:00.000Z", {}, [{ id: "t-start", name: "__start__", interrupts: [], error: null }]),
    ];
    const timeline = fold(EMPTY_TIMELINE, historySteps(failed, FIRST, "2026-12-04T09:59:59.000Z"));
    expect(stepsOf(timeline).map((step) => [step.node, step.status, step.error])).toEqual([["assess", "failed", "ValueError: no such order"]]);
  });

  it("reads only another run's checkpoints as nothing of this run", () => {
    expect(historySteps(HISTORY, "run-3", "2026-12-04T21:20:00.000Z")).toEqual([]);
  });
});

describe("hasSteps", () => {
  it("is true for a journal with the graph's task events, false for values or a subgraph's alone", () => {
    expect(
      hasSteps([
        { event: "metadata", data: {} },
        { event: "values", data: {} },
      ]),
    ).toBe(false);
    expect(hasSteps([{ event: "debug|child:1", data: {} }])).toBe(false);
    expect(hasSteps([{ event: "tasks", data: {} }])).toBe(true);
    expect(hasSteps([{ event: "debug", data: {} }])).toBe(true);
  });
});
