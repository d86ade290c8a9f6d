import { describe, expect, it } from "vitest";
import { EMPTY_TIMELINE, runSpan, type Timeline, type TimelineNote, type TimelineStep } from "./timeline";

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
  it("counts a wait before a resumed step through its note", () => {
    // The wait node's visit was resumed at :39 and kept only that start; the note says it began at :35.
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
