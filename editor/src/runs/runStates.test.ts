import { soon } from "./format";
import { describe, expect, it } from "vitest";
import type { PlaitRun, PlaitThread } from "./runApi";
import { type RunPhase, useRunStore } from "./runStore";
import { pastState, queueNote, reachedEnd, runState, shownState, stateHeading } from "./runStates";

function run(fields: Partial<PlaitRun>): PlaitRun {
  return {
    run_id: "r",
    thread_id: "t",
    assistant_id: "a",
    created_at: "2026-12-03T10:00:00Z",
    updated_at: "2026-12-03T10:00:01Z",
    status: "success",
    metadata: {},
    multitask_strategy: "reject",
    ...fields,
  } as PlaitRun;
}

const thread = { thread_id: "t", status: "idle" } as PlaitThread;

describe("run states", () => {
  it("shows the server's label for a run that lost map items, beside the SDK's success", () => {
    const shown = runState(run({ plait_state: "partially_succeeded", plait_state_label: "partial: 3 of 5 items lost" }));
    expect(shown).toEqual({ state: "partially_succeeded", label: "partial: 3 of 5 items lost", tone: "partial" });
  });

  it("tells waiting on a tool from a failure and a dead letter", () => {
    expect(runState(run({ plait_state: "waiting_for_tool", plait_state_label: "waiting for demo/slow_report" })).tone).toBe("waiting");
    expect(runState(run({ status: "error", plait_status: "dead_lettered" }))).toEqual({ state: "dead_lettered", label: "dead lettered", tone: "bad" });
  });

  it("reads an older server's runs from their status", () => {
    expect(pastState({ ...thread, status: "interrupted" } as PlaitThread, [run({})]).label).toBe("waiting");
    expect(pastState(thread, [run({ status: "timeout" })])).toEqual({ state: "timeout", label: "timeout", tone: "bad" });
    expect(pastState(thread, []).label).toBe("no run");
  });

  it("says a run's priority when it is not the default, and a waiting run's deadline", () => {
    const when = (iso: string) => `at ${iso}`;
    const expires = "2026-12-03T10:10:00Z";
    expect(queueNote(run({ plait_priority: 5, plait_expires_at: null }), when)).toBe("");
    expect(queueNote(run({ status: "pending", plait_state: "queued", plait_priority: 8, plait_expires_at: expires }), when)).toBe(
      `priority 8 · expires at ${expires}`,
    );
    // Ended: its deadline no longer matters; its label says when it expired.
    expect(queueNote(run({ status: "error", plait_state: "expired", plait_priority: 0, plait_expires_at: expires }), when)).toBe("priority 0");
    expect(runState(run({ status: "error", plait_state: "expired", plait_state_label: `expired: not started by ${expires}` })).tone).toBe("bad");
  });
});

describe("runState's words for a time", () => {
  it("shows a timer's and a deadline's time as the rest of the run view does, not as ISO", () => {
    const until = "2026-12-03T16:09:08.583000+00:00";
    const waiting = runState(
      run({ status: "success", plait_state: "waiting_for_timer", plait_state_label: `waiting until ${until}`, plait_state_detail: { waiting: { until } } }),
    );
    expect(waiting.label).toBe(`waiting until ${soon(until)}`);
    expect(waiting.label).not.toContain("T16:09");
    const expired = runState(run({ status: "error", plait_state: "expired", plait_state_detail: { expires_at: until } }));
    expect(expired.label).toBe(`expired: not started by ${soon(until)}`);
  });

  it("keeps the server's words for every other state", () => {
    expect(runState(run({ status: "success", plait_state: "partially_succeeded", plait_state_label: "partial: 2 of 5 items lost" })).label).toBe(
      "partial: 2 of 5 items lost",
    );
  });
});

describe("shownState: the shown run's words before and after the server's state is read", () => {
  const none = { approvals: {}, timers: {}, tools: {} };
  // The server's labels (engine/run/states.py state_label) and the editor's own for no run, one not created yet,
  // a wait of unknown kind and an end not read yet.
  const words = ["No run", "starting", "running", "waiting", "ended, reading the result…"];

  it("never shows a phase's own word: the stream's end comes before the run's row", () => {
    const phases: RunPhase[] = ["idle", "starting", "running", "waiting", "success", "error"];
    for (const phase of phases) expect(words).toContain(shownState(phase, null, none).label);
  });

  it("claims no end before the run's row is read: a map's losses, a timeout are the row's to say", () => {
    expect(shownState("success", null, none)).toEqual({ state: "ending", label: "ended, reading the result…", tone: "none" });
    expect(shownState("error", null, none)).toEqual(shownState("success", null, none));
  });

  it("says failed when the editor could not start or follow the run: no row will be read", () => {
    useRunStore.getState().reset();
    useRunStore.getState().fail("network error");
    const state = useRunStore.getState();
    expect(shownState(state.phase, state.ended, state)).toEqual({ state: "failed", label: "failed", tone: "bad" });
    useRunStore.getState().reset();
  });

  it("says a parked wait's time, the earliest of its timers, before the server does", () => {
    const timers = { later: "2026-12-03T16:20:00Z", hold: "2026-12-03T16:09:08Z" };
    const shown = shownState("waiting", null, { ...none, timers });
    expect(shown).toEqual({ state: "waiting_for_timer", label: `waiting until ${soon("2026-12-03T16:09:08Z")}`, tone: "waiting" });
    expect(stateHeading(shown)).toBe("Waiting for a timer");
  });

  it("tells a wait for a tool's MCP task from a wait for a person, as the server does", () => {
    const tools = { report: "demo/slow_report", other: "demo/slow_report", fetch: "archive/fetch" };
    const shown = shownState("waiting", null, { ...none, tools });
    // The server's words (engine/run/states.py state_label): its tools, sorted, each once.
    expect(shown).toEqual({ state: "waiting_for_tool", label: "waiting for archive/fetch, demo/slow_report", tone: "waiting" });
    expect(stateHeading(shown)).toBe("Waiting for a tool");
    // A person asked among them: the person is the one to act (waiting_on).
    const asked = shownState("waiting", null, { ...none, tools, approvals: { approve: {} }, timers: { hold: "2026-12-03T16:09:08Z" } });
    expect(stateHeading(asked)).toBe("Waiting for a person");
    expect(stateHeading(shownState("waiting", null, { ...none, tools, timers: { hold: "2026-12-03T16:09:08Z" } }))).toBe("Waiting for a tool");
    // Interrupts of no known kind: waiting, for nobody named.
    expect(shownState("waiting", null, none)).toEqual({ state: "waiting", label: "waiting", tone: "waiting" });
  });

  it("takes the server's state once read", () => {
    const ended = runState(run({ plait_state: "partially_succeeded", plait_state_label: "partial: 3 of 5 items lost" }));
    expect(shownState("success", ended, none)).toBe(ended);
    expect(stateHeading(ended)).toBe("Partially succeeded");
    expect(stateHeading({ state: "retrying", label: "retrying", tone: "active" })).toBe("Retrying");
  });
});

describe("reachedEnd: whether the run went to END, as its row says", () => {
  const ended = (plait_state: string) => runState({ status: "success", plait_state } as PlaitRun);
  it("only for a success, whole or partial", () => {
    expect(reachedEnd(ended("succeeded"))).toBe(true);
    expect(reachedEnd(ended("partially_succeeded"))).toBe(true);
    expect(["cancelled", "timed_out", "failed", "dead_lettered", "waiting_for_person"].filter((state) => reachedEnd(ended(state)))).toEqual([]);
    // Not before the row is read.
    expect(reachedEnd(null)).toBe(false);
  });
});
