import { describe, expect, it } from "vitest";
import type { GraphEdge } from "../spec/model";
import { toFlowEdge } from "./edges";

const edge: GraphEdge = { id: "e3:route:revise", source: "reviewer", target: "executor", kind: "route", label: "revise", edgeIndex: 3, key: "revise" };

describe("canvas edges", () => {
  it("draws the run's path in the accent, thicker, and dims the rest", () => {
    const taken = toFlowEdge(edge, false, { label: "revise", run: "taken" });
    expect(taken.className).toContain("taken");
    expect(taken.style).toMatchObject({ stroke: "#2f5fd0", strokeWidth: 3 });
    const other = toFlowEdge(edge, false, { label: "revise", run: "not-taken" });
    expect(other.className).toContain("not-taken");
    expect(other.style).toMatchObject({ stroke: "#6d4fd8", strokeWidth: 1.5 });
    const none = toFlowEdge(edge, false, { label: "revise" });
    expect(none.className).not.toMatch(/taken/);
  });

  it("is a routed edge on the editor's canvas and a step edge with its own label elsewhere", () => {
    const route = {
      points: [
        { x: 0, y: 0 },
        { x: 0, y: 50 },
      ],
    };
    expect(toFlowEdge(edge, true, { label: "approve | revise", route })).toMatchObject({ type: "routed", label: "approve | revise", data: { route } });
    expect(toFlowEdge(edge, false)).toMatchObject({ type: "smoothstep", label: "revise" });
  });
});
