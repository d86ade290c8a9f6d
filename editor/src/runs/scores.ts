/**
 * A thread's score badge in the past runs: the mean of its runs' graders' scores
 * (docs/evaluation.md), coloured by how good it is, with each grader's score and
 * reason (or why it failed) in the hover text.
 */

import type { PlaitRun, RunScore } from "./runApi";

export type ScoreTone = "good" | "fair" | "poor" | "failed" | "pending";

export interface ScoreBadge {
  label: string;
  tone: ScoreTone;
  title: string;
}

/** At or above: a good score; at or above FAIR: fair; below: poor. */
export const GOOD = 0.8;
export const FAIR = 0.5;

/** The badge of `runs` (a thread's), or null when none of them was graded. */
export function scoreBadge(runs: Pick<PlaitRun, "run_id" | "plait_scores">[]): ScoreBadge | null {
  const all = runs.flatMap((run) => run.plait_scores ?? []);
  if (all.length === 0) return null;
  const scored = all.filter((s): s is RunScore & { score: number } => s.status === "scored" && s.score !== null);
  const failed = all.filter((s) => s.status === "failed").length;
  const several = new Set(all.map((s) => s.run_id)).size > 1;
  const title = all.map((s) => line(s, several)).join("\n");
  if (scored.length === 0) {
    return failed > 0
      ? { label: failed === 1 ? "grader failed" : `${failed} graders failed`, tone: "failed", title }
      : { label: "grading…", tone: "pending", title };
  }
  const mean = scored.reduce((sum, s) => sum + s.score, 0) / scored.length;
  const label = failed > 0 ? `${mean.toFixed(2)} · ${failed} failed` : mean.toFixed(2);
  return { label, tone: mean >= GOOD ? "good" : mean >= FAIR ? "fair" : "poor", title };
}

function line(score: RunScore, withRun: boolean): string {
  const who = withRun ? `${score.grader} (run ${score.run_id.slice(0, 8)})` : score.grader;
  if (score.status === "failed") return `${who}: failed: ${score.error ?? "no reason given"}`;
  if (score.status === "pending" || score.score === null) return `${who}: pending`;
  return score.reason ? `${who}: ${score.score.toFixed(2)}: ${score.reason}` : `${who}: ${score.score.toFixed(2)}`;
}
