import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { specOutline } from "./specOutline";

const refund = readFileSync(new URL("../../../specs/refund-approval.yaml", import.meta.url), "utf8");

describe("specOutline", () => {
  it("lists nodes, every kind of edge and the examples", () => {
    const outline = specOutline(refund);
    expect(outline.nodes.map((n) => n.id)).toEqual(["assess", "approve", "refund", "decline"]);
    expect(outline.nodes.find((n) => n.id === "approve")?.kind).toBe("approval");
    expect(outline.edges).toContainEqual({ from: "assess", to: "refund", label: "default" });
    expect(outline.edges).toContainEqual({ from: "approve", to: "decline", label: "reject" });
    expect(outline.edges).toContainEqual({ from: "START", to: "assess", label: null });
    expect(outline.examples[0]).toMatchObject({ name: "large_refund_approved", input: { amount: 180 } });
  });

  it("gives an empty outline for text that is not YAML", () => {
    expect(specOutline("a: [").nodes).toEqual([]);
  });
});
