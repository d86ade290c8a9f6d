import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseSpec } from "./model";

const refund = readFileSync(new URL("../../../specs/refund-approval.yaml", import.meta.url), "utf8");
const mcpTools = readFileSync(new URL("../../../specs/mcp-tools.yaml", import.meta.url), "utf8");

describe("the model of a whole spec", () => {
  it("lists nodes, every kind of edge and the examples", () => {
    const model = parseSpec(refund).model!;
    expect(model.nodes.map((n) => n.id)).toEqual(["assess", "approve", "refund", "decline"]);
    expect(model.nodes.find((n) => n.id === "approve")?.kind).toBe("approval");
    const edges = model.edges.map((e) => ({ from: e.source, to: e.target, label: e.label }));
    expect(edges).toContainEqual({ from: "assess", to: "refund", label: "default" });
    expect(edges).toContainEqual({ from: "approve", to: "decline", label: "reject" });
    expect(edges).toContainEqual({ from: "START", to: "assess", label: null });
    expect(model.examples[0]).toMatchObject({ name: "large_refund_approved", input: { amount: 180 } });
  });

  it("knows which tools are MCP tools, of which server, and the named agents' tools", () => {
    const { mcp } = parseSpec(mcpTools).model!;
    expect(mcp.servers).toEqual({ lookup_order: "demo", open_ticket: "demo", slow_report: "demo" });
    expect(mcp.agentTools).toEqual({ helper: ["lookup_order", "open_ticket"] });
    expect(parseSpec(refund).model!.mcp.servers).toEqual({});
  });

  it("gives no model for text that is not YAML", () => {
    expect(parseSpec("a: [").model).toBeNull();
  });
});
