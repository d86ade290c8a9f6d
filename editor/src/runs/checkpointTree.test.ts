import { describe, expect, it } from "vitest";
import type { ThreadState } from "../api/client";
import { checkpointRows } from "./checkpointTree";
import { stateDiff } from "./stateDiff";

let clock = 0;
function cp(id: string, parent: string | null, next: string[], extra: Partial<ThreadState> = {}): ThreadState {
  clock += 1;
  return {
    values: {},
    next,
    checkpoint: { thread_id: "t", checkpoint_ns: "", checkpoint_id: id },
    parent_checkpoint: parent ? { thread_id: "t", checkpoint_ns: "", checkpoint_id: parent } : null,
    metadata: { step: id === "c-1" ? -1 : 0, source: "loop" },
    created_at: `2026-12-02T00:00:${String(clock).padStart(2, "0")}Z`,
    tasks: [],
    ...extra,
  };
}

describe("checkpoint tree", () => {
  it("names checkpoints in words, hides the engine's first one and shows a fork as a branch", () => {
    clock = 0;
    const history = [
      cp("c-1", null, ["__start__"]),
      cp("c0", "c-1", ["planner"]),
      cp("c1", "c0", ["executor"]),
      cp("c2", "c1", ["reviewer"]),
      cp("c3", "c2", []),
      // A fork from c1 with an edited state, then the run from it.
      cp("e1", "c1", ["executor"], { metadata: { step: 2, source: "update" } }),
      cp("e2", "e1", ["reviewer"]),
    ].reverse(); // the server answers newest first
    const rows = checkpointRows(history);
    expect(rows.map((row) => [row.label, row.depth, row.branch, row.fork])).toEqual([
      ["input", 0, false, false],
      ["after planner", 0, false, true],
      ["edited state", 1, true, false],
      ["after executor", 1, false, false],
      ["after executor", 0, false, false],
      ["after reviewer · end", 0, false, false],
    ]);
    expect(rows.map((row) => row.writer)).toEqual([null, "planner", null, "executor", "executor", "reviewer"]);
    expect(rows.some((row) => row.label.includes("__start__"))).toBe(false);
  });

  it("names a fork's copy of the checkpoint it started from", () => {
    clock = 0;
    const rows = checkpointRows(
      [
        cp("c0", null, ["assess"]),
        cp("c1", "c0", ["refund"]),
        cp("c2", "c1", []),
        cp("f", "c1", ["refund"], { metadata: { step: 2, source: "fork" } }),
        cp("f2", "f", []),
      ].reverse(),
    );
    expect(rows.map((row) => `${row.depth}:${row.label}`)).toEqual(["0:input", "0:after assess", "1:fork", "1:after refund · end", "0:after refund · end"]);
  });

  it("says where a thread waits for an approval", () => {
    clock = 0;
    const waiting = cp("c1", "c0", ["approve"], { tasks: [{ id: "x", name: "approve", interrupts: [{ value: {} }] }] });
    const rows = checkpointRows([waiting, cp("c0", null, ["assess"])]);
    expect(rows.map((row) => row.label)).toEqual(["input", "after assess · waiting at approve"]);
    // Once decided, the run went on from it: it no longer waits.
    const resumed = checkpointRows([cp("c2", "c1", ["refund"]), waiting, cp("c0", null, ["assess"])]);
    expect(resumed.map((row) => row.label)).toEqual(["input", "after assess", "after approve"]);
  });
});

describe("state diff", () => {
  it("lists added, removed and changed fields", () => {
    expect(stateDiff({ a: 1, b: { x: 1 }, c: 3 }, { a: 1, b: { x: 2 }, d: 4 })).toEqual([
      { field: "b", change: "changed", before: { x: 1 }, after: { x: 2 } },
      { field: "d", change: "added", before: undefined, after: 4 },
      { field: "c", change: "removed", before: 3, after: undefined },
    ]);
  });
});
