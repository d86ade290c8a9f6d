import { describe, expect, it } from "vitest";
import type { Approval } from "../api/client";
import { filterApprovals, type InboxFilter } from "./inboxFilters";

const now = Date.parse("2026-01-02T12:00:00Z");
const approval = (id: string, graph: string, created: string, status: Approval["status"] = "pending"): Approval => ({
  approval_id: id,
  thread_id: `t-${id}`,
  run_id: `r-${id}`,
  graph,
  version: "1.0.0",
  node: "approve",
  action: "issue_refund",
  arguments: {},
  reason: null,
  expires_at: null,
  status,
  created_at: created,
});
const list = [
  approval("old", "refund-approval", "2025-12-31T12:00:00Z", "rejected"),
  approval("recent", "refund-approval", "2026-01-02T11:30:00Z"),
  approval("other", "expenses", "2026-01-02T06:00:00Z", "approved"),
];
const all: InboxFilter = { graph: "", status: "", age: "any", sort: "oldest" };
const ids = (filter: InboxFilter) => filterApprovals([...list], filter, now).map((a) => a.approval_id);

describe("inbox filters", () => {
  it("sorts by request time either way", () => {
    expect(ids(all)).toEqual(["old", "other", "recent"]);
    expect(ids({ ...all, sort: "newest" })).toEqual(["recent", "other", "old"]);
  });

  it("filters by graph, status and age", () => {
    expect(ids({ ...all, graph: "expenses" })).toEqual(["other"]);
    expect(ids({ ...all, status: "rejected" })).toEqual(["old"]);
    expect(ids({ ...all, age: "hour" })).toEqual(["recent"]);
    expect(ids({ ...all, age: "day" })).toEqual(["other", "recent"]);
    expect(ids({ ...all, age: "over-hour" })).toEqual(["old", "other"]);
    expect(ids({ ...all, age: "over-day" })).toEqual(["old"]);
  });
});
