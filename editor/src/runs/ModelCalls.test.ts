import { describe, expect, it } from "vitest";
import { messageText, modelCallsOf } from "./ModelCalls";
import type { AuditRecord } from "./runApi";

function record(kind: string, node: string): AuditRecord {
  return { kind, node, step: null, tool: null, actor: "node", detail: {}, created_at: "2026-12-03T10:00:00Z" };
}

describe("modelCallsOf", () => {
  it("keeps the node's model calls in order and nothing else", () => {
    const records = [record("model_call", "rate"), record("tool_call", "rate"), record("model_call", "answer"), record("model_call", "rate")];
    expect(modelCallsOf(records, "rate")).toEqual([records[0], records[3]]);
  });
});

describe("messageText", () => {
  it("names the model's reply and shows the tools it called", () => {
    expect(messageText({ type: "ai", content: "", tool_calls: [{ name: "search", args: { q: "x" } }] })).toEqual({
      role: "model",
      text: '→ search({"q":"x"})',
    });
  });
  it("shows a person's message as the user's and structured content as JSON", () => {
    expect(messageText({ type: "human", content: "hello" })).toEqual({ role: "user", text: "hello" });
    expect(messageText({ type: "system", content: [{ type: "text", text: "be brief" }] }).role).toBe("system");
  });
});
