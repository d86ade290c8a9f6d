import { describe, expect, it } from "vitest";
import { describeType } from "./schemaHover";
import { yamlIndent } from "./indent";

describe("the YAML pane", () => {
  it("indents a new line one step after `key:`, beside an item's keys, else as the line above", () => {
    expect(yamlIndent("    retry:")).toBe(6);
    expect(yamlIndent("    retry:   # how often")).toBe(6);
    expect(yamlIndent("    reason: >-")).toBe(6);
    expect(yamlIndent("    - from: a")).toBe(6);
    expect(yamlIndent("    -")).toBe(6);
    expect(yamlIndent("      kind: llm")).toBe(6);
    expect(yamlIndent("")).toBe(0);
  });

  it("says in words what a field takes", () => {
    expect(describeType({ enum: ["approve", "reject"] })).toBe("one of: approve, reject");
    expect(describeType({ anyOf: [{ type: "string" }, { type: "null" }] })).toBe("text (optional)");
    expect(describeType({ discriminator: { mapping: { agent: "#/a", llm: "#/b" } }, oneOf: [] })).toBe("one of the kinds: agent, llm");
    expect(describeType({ type: "array", items: { type: "string" } })).toBe("a list of text");
    expect(describeType({ $ref: "#/$defs/RetryPolicy" })).toBe("retry policy");
  });
});
