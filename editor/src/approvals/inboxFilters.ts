/** The inbox's filters and sort (pure; exported for tests). */

import type { Approval } from "../api/client";

export type Age = "any" | "hour" | "day" | "over-hour" | "over-day";
export type Sort = "oldest" | "newest";

export interface InboxFilter {
  graph: string;
  /** "" for any; on the decided tab one of approved, rejected, edited, expired. */
  status: string;
  age: Age;
  sort: Sort;
}

export const AGES: Record<Age, string> = {
  any: "any time",
  hour: "in the last hour",
  day: "in the last 24 hours",
  "over-hour": "over an hour ago",
  "over-day": "over a day ago",
};

const HOUR = 3600_000;

function ageMatches(age: Age, requested: number, now: number): boolean {
  const elapsed = now - requested;
  switch (age) {
    case "any":
      return true;
    case "hour":
      return elapsed <= HOUR;
    case "day":
      return elapsed <= 24 * HOUR;
    case "over-hour":
      return elapsed > HOUR;
    case "over-day":
      return elapsed > 24 * HOUR;
  }
}

/** The approvals the filter keeps, in its order (by request time). */
export function filterApprovals(list: Approval[], filter: InboxFilter, now: number = Date.now()): Approval[] {
  const kept = list.filter(
    (a) =>
      (!filter.graph || a.graph === filter.graph) &&
      (!filter.status || a.status === filter.status) &&
      ageMatches(filter.age, Date.parse(a.created_at ?? "") || now, now),
  );
  const sign = filter.sort === "oldest" ? 1 : -1;
  return kept.sort((a, b) => sign * (a.created_at ?? "").localeCompare(b.created_at ?? ""));
}
