import { describe, expect, it } from "vitest";
import schema from "../../../schemas/plait-v1.schema.json";
import { NODE_KINDS } from "../spec/model";
import { formatValue, formFields, nodeKindSchema, parseValue, type JsonSchema } from "./schemaForm";

const root = schema as JsonSchema;
const byName = (kind: string) => Object.fromEntries(formFields(root, kind).map((f) => [f.name, f]));

describe("property forms from the JSON Schema", () => {
  it("resolves every kind the schema has through its discriminator", () => {
    for (const kind of NODE_KINDS) {
      const def = nodeKindSchema(root, kind);
      expect(((def!.properties as JsonSchema).kind as JsonSchema).const).toBe(kind);
    }
    expect(nodeKindSchema(root, "nope")).toBeNull();
    expect(formFields(root, "nope")).toEqual([]);
  });

  it("picks widgets from types, anyOf-null, enums, arrays, refs and durations", () => {
    const llm = byName("llm");
    expect(llm.kind.widget).toBe("readonly");
    expect(llm.model).toMatchObject({ widget: "string", required: true });
    expect(llm.prompt.widget).toBe("text");
    expect(llm.prompt.description).toMatch(/Jinja2/);
    expect(llm.schema.widget).toBe("yaml");
    expect(llm.retry.widget).toBe("yaml");
    expect(llm.max_visits.widget).toBe("integer");
    expect(llm.timeout.widget).toBe("scalar");
    expect(llm.writes.widget).toBe("yaml");
    const agent = byName("agent");
    expect(agent.tools.widget).toBe("list");
    const approval = byName("approval");
    expect(approval.on_expire).toMatchObject({ widget: "enum", options: ["approve", "reject", "fail"] });
    // The kind's own fields come before the shared ones.
    const names = formFields(root, "tool").map((f) => f.name);
    expect(names.slice(0, 3)).toEqual(["kind", "tool", "args"]);
    expect(names.indexOf("description")).toBeGreaterThan(names.indexOf("args"));
  });

  it("marks the fields that name what the spec defines", () => {
    const agent = byName("agent");
    expect([agent.kind.reference, agent.model.reference, agent.agent.reference, agent.tools.reference, agent.output.reference]).toEqual([
      "kinds",
      "models",
      "agents",
      "tools",
      "state",
    ]);
    expect(byName("tool").tool.reference).toBe("tools");
    expect([byName("parallel").branches.reference, byName("parallel").join.reference]).toEqual(["nodes", "nodes"]);
    expect(byName("subgraph").ref.reference).toBe("graphs");
    expect(agent.prompt.reference).toBeNull();
  });

  it("formats and parses values per widget", () => {
    expect(parseValue("list", "a\n b \n\n")).toEqual(["a", "b"]);
    expect(formatValue("list", ["a", "b"])).toBe("a\nb");
    expect(parseValue("scalar", "30")).toBe(30);
    expect(parseValue("scalar", "5m")).toBe("5m");
    expect(parseValue("integer", "")).toBeUndefined();
    expect(parseValue("yaml", "max_attempts: 2")).toEqual({ max_attempts: 2 });
    expect(formatValue("yaml", { max_attempts: 2 })).toBe("max_attempts: 2");
    expect(() => parseValue("yaml", "a: b: c")).toThrow();
    expect(parseValue("string", "")).toBeUndefined();
  });
});
