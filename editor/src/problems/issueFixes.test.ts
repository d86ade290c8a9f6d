import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { issueFix } from "./issueFixes";
import { applyQuickFix } from "./yamlProblem";

const SPEC = `# yaml-language-server: $schema=../schemas/plait-v1.schema.json
kind: Graph
metadata: {name: demo, version: "1.0.0"}
spec:
  models:
    summarizer: {provider: scripted}
  nodes:
    summarize:
      kind: lm
      model: "summariser"
  edges: []
`;

describe("one-click fixes of the server's issues", () => {
  it("replaces the misspelled name a did-you-mean names, keeping its quotes", () => {
    const model = issueFix(SPEC, {
      pointer: "/spec/nodes/summarize/model",
      message: "model `summariser` is not defined in spec.models",
      fix: "define it under spec.models, or use an existing one. Did you mean `summarizer`?",
      code: "unknown-model",
    })!;
    expect(model.label).toContain("summarizer");
    expect(applyQuickFix(SPEC, model)).toContain('      model: "summarizer"\n');
    const kind = issueFix(SPEC, { pointer: "/spec/nodes/summarize", message: "unknown node kind `lm`", fix: "use one of: agent, llm; did you mean `llm`?" })!;
    expect(applyQuickFix(SPEC, kind)).toContain("      kind: llm\n");
  });

  it("adds a missing apiVersion after the leading comments, and a missing edge", () => {
    const api = issueFix(SPEC, {
      pointer: "/apiVersion",
      message: "`apiVersion` is required",
      fix: "add `apiVersion: plait/v1` at the top",
      code: "schema-missing-key",
    })!;
    const fixed = applyQuickFix(SPEC, api);
    expect(fixed.split("\n").slice(0, 2)).toEqual(["# yaml-language-server: $schema=../schemas/plait-v1.schema.json", "apiVersion: plait/v1"]);
    const edge = issueFix(SPEC, { pointer: "/spec/edges", message: "no edge leaves `START`", fix: "add `- {from: START, to: summarize}` to spec.edges" })!;
    expect(parseDocument(applyQuickFix(SPEC, edge)).toJS().spec.edges).toEqual([{ from: "START", to: "summarize" }]);
    expect(issueFix(SPEC, { message: "something else", fix: "think about it" })).toBeNull();
  });
});
