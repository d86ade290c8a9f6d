import { describe, expect, it } from "vitest";
import { argumentsOf, changesOf, fieldsOf, parseField } from "./argumentFields";

describe("approval argument fields", () => {
  it("types each field by its value and parses it back", () => {
    const fields = fieldsOf({ order_id: "A-1", amount: 180, notify: true, meta: { tags: ["x"] }, note: null });
    expect(fields.map((f) => f.kind)).toEqual(["string", "number", "boolean", "json", "json"]);
    expect(argumentsOf(fields)).toEqual({
      value: { order_id: "A-1", amount: 180, notify: true, meta: { tags: ["x"] }, note: null },
      errors: {},
    });
  });

  it("says which fields do not parse", () => {
    expect(parseField({ key: "amount", kind: "number", text: "12x" })).toEqual({ ok: false, error: "not a number" });
    expect(parseField({ key: "amount", kind: "number", text: " " })).toEqual({ ok: false, error: "not a number" });
    const { errors } = argumentsOf([
      { key: "amount", kind: "number", text: "90" },
      { key: "meta", kind: "json", text: "{oops" },
    ]);
    expect(Object.keys(errors)).toEqual(["meta"]);
  });

  it("lists the changed, added and removed keys, and nothing when equal", () => {
    const before = { order_id: "A-1", amount: 180, keep: { a: 1 } };
    expect(changesOf(before, { ...before })).toEqual([]);
    expect(changesOf(before, { order_id: "A-1", amount: 90, extra: true })).toEqual([
      { key: "amount", before: "180", after: "90" },
      { key: "keep", before: '{"a":1}', after: undefined },
      { key: "extra", before: undefined, after: "true" },
    ]);
    expect(changesOf([1], [2])).toEqual([{ key: "", before: "[1]", after: "[2]" }]);
  });
});
