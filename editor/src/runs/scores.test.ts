import { describe, expect, it } from "vitest";
import type { RunScore } from "./runApi";
import { scoreBadge } from "./scores";

function score(fields: Partial<RunScore>): RunScore {
  return { run_id: "run-aaaaaaaa-1", grader: "polite", status: "scored", score: 0.9, reason: null, error: null, ...fields };
}

describe("score badges", () => {
  it("shows nothing for a thread no grader looked at", () => {
    expect(scoreBadge([{ run_id: "r", plait_scores: [] }, { run_id: "s" }])).toBeNull();
  });

  it("shows the mean of the scores, toned, with each grader's reason on hover", () => {
    const badge = scoreBadge([
      {
        run_id: "run-aaaaaaaa-1",
        plait_scores: [score({ score: 1, reason: "refunded as agreed" }), score({ grader: "short", score: 0.6 })],
      },
    ]);
    expect(badge).toEqual({ label: "0.80", tone: "good", title: "polite: 1.00: refunded as agreed\nshort: 0.60" });
    expect(scoreBadge([{ run_id: "x", plait_scores: [score({ score: 0.5 })] }])?.tone).toBe("fair");
    expect(scoreBadge([{ run_id: "x", plait_scores: [score({ score: 0.49 })] }])?.tone).toBe("poor");
  });

  it("says when graders failed, with their errors, and when grading is still to come", () => {
    const failed = score({ status: "failed", score: null, error: "KeyError: 'verdict'" });
    expect(scoreBadge([{ run_id: "x", plait_scores: [failed] }])).toEqual({
      label: "grader failed",
      tone: "failed",
      title: "polite: failed: KeyError: 'verdict'",
    });
    const mixed = scoreBadge([{ run_id: "x", plait_scores: [score({ grader: "judge", score: 0.3 }), failed] }]);
    expect(mixed?.label).toBe("0.30 · 1 failed");
    expect(mixed?.tone).toBe("poor");
    const pending = scoreBadge([{ run_id: "x", plait_scores: [score({ status: "pending", score: null })] }]);
    expect(pending).toEqual({ label: "grading…", tone: "pending", title: "polite: pending" });
  });

  it("names the run of each score when a thread's runs were graded", () => {
    const badge = scoreBadge([
      { run_id: "run-aaaaaaaa-1", plait_scores: [score({ score: 1 })] },
      { run_id: "run-bbbbbbbb-2", plait_scores: [score({ run_id: "run-bbbbbbbb-2", score: 0 })] },
    ]);
    expect(badge?.label).toBe("0.50");
    expect(badge?.title).toBe("polite (run run-aaaa): 1.00\npolite (run run-bbbb): 0.00");
  });
});
