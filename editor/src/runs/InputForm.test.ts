import { describe, expect, it } from "vitest";
import { formFields, parseField } from "./InputForm";

describe("input form fields", () => {
  it("types fields from the input schema, falling back to the state schema", () => {
    const fields = formFields(
      { type: "object", properties: { amount: {}, tags: { type: "array" }, note: {} }, required: ["amount"] },
      { properties: { amount: { type: "number" } } },
    );
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ["amount", "number", true],
      ["tags", "json", false],
      ["note", "any", false],
    ]);
  });

  it("parses field text by kind", () => {
    const [amount, , note] = formFields({ properties: { amount: { type: "number" }, tags: {}, note: {} }, required: ["amount"] });
    expect(parseField(amount, "12.5")).toBe(12.5);
    expect(() => parseField(amount, "")).toThrow("amount is required");
    expect(() => parseField(amount, "x")).toThrow("must be a number");
    expect(parseField(note, "A-1002")).toBe("A-1002");
    expect(parseField(note, '{"a": 1}')).toEqual({ a: 1 });
  });
});
