import { describe, expect, it } from "vitest";
import { editorHash, parseRoute } from "./routes";

describe("routes", () => {
  it("reads the thread of an editor link and writes it back", () => {
    const hash = editorHash("refund approval", "1.0.0", "t-1");
    expect(hash).toBe("#/graphs/refund%20approval/1.0.0?thread=t-1");
    expect(parseRoute(hash)).toEqual({ page: "editor", name: "refund approval", version: "1.0.0", thread: "t-1" });
    expect(parseRoute(editorHash("g", "2.0.0"))).toEqual({ page: "editor", name: "g", version: "2.0.0", thread: null });
  });

  it("keeps the other pages", () => {
    expect(parseRoute("#/")).toEqual({ page: "graphs" });
    expect(parseRoute("")).toEqual({ page: "graphs" });
    // The parent of every editor link lists the graphs too.
    expect(parseRoute("#/graphs")).toEqual({ page: "graphs" });
    expect(parseRoute("#/graphs/")).toEqual({ page: "graphs" });
    expect(parseRoute("#/approvals")).toEqual({ page: "approvals" });
    expect(parseRoute("#/nowhere")).toEqual({ page: "missing", hash: "#/nowhere" });
  });
});
