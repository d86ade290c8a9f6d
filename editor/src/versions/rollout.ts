/**
 * Readable labels of a graph's rollout (decision 90): which version new
 * threads start on and how many of them get the canary, and what the
 * editor's rollout controls may offer (RolloutControls.tsx).
 */

import type { RolloutInfo } from "../api/client";

export type RolloutRole = "stable" | "canary";

/** The version's part in the rollout, or `null` (no rollout, or a version it does not name). */
export function versionRole(rollout: RolloutInfo | null | undefined, version: string): RolloutRole | null {
  if (!rollout?.stable) return null;
  if (version === rollout.canary) return "canary";
  return version === rollout.stable ? "stable" : null;
}

/** A short badge: `canary · 25%`, `stable · 75%`, or `stable` when there is no canary. */
export function roleLabel(rollout: RolloutInfo | null | undefined, version: string): string | null {
  const role = versionRole(rollout, version);
  if (role === null || !rollout) return null;
  if (!rollout.canary) return "stable";
  return role === "canary" ? `canary · ${rollout.share}%` : `stable · ${100 - rollout.share}%`;
}

/** One sentence for a person: where new threads go now. */
export function rolloutSummary(rollout: RolloutInfo | null | undefined): string {
  if (!rollout?.stable) return "No rollout: new threads start on the newest version.";
  if (!rollout.canary) return `New threads start on ${rollout.stable} (stable; no canary).`;
  return `${rollout.share}% of new threads start on the canary ${rollout.canary}, ${100 - rollout.share}% on the stable ${rollout.stable}.`;
}

/** `3 runs on 2 threads` (or `no runs`) for a version's count in the window. */
export function runsLabel(count: { runs: number; threads: number } | undefined): string {
  if (!count || count.runs === 0) return "no runs";
  const runs = `${count.runs} run${count.runs === 1 ? "" : "s"}`;
  return `${runs} on ${count.threads} thread${count.threads === 1 ? "" : "s"}`;
}

/**
 * The versions a canary may start on: every version but the one new threads
 * start on now (the stable one, or the newest when there is no rollout).
 */
export function canaryCandidates(rollout: RolloutInfo | null | undefined, versions: string[]): string[] {
  const base = rollout?.stable ?? versions[versions.length - 1];
  return versions.filter((version) => version !== base);
}

/** A share typed in the form as a whole percent 0..100, or `null` when it is not one. */
export function parseShare(text: string): number | null {
  if (!/^\d{1,3}$/.test(text.trim())) return null;
  const share = Number(text);
  return share <= 100 ? share : null;
}
