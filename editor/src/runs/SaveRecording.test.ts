import { describe, expect, it } from "vitest";
import { recordingFileName } from "./SaveRecording";

describe("recordingFileName", () => {
  it("names the graph and the thread's first eight characters", () => {
    expect(recordingFileName("refund-approval", "6bb742bd-dae5-47a3-add8-10f859d93c09")).toBe("refund-approval-6bb742bd.recording.json");
  });
});
