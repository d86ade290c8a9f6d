import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { applyQuickFix, explainYaml, scanStructure, type YamlProblem } from "./yamlProblem";

const DIR = new URL("../../../specs/", import.meta.url);
const SPECS = readdirSync(DIR)
  .filter((f) => f.endsWith(".yaml"))
  .map((f) => ({ file: f, text: readFileSync(new URL(f, DIR), "utf8") }));
const SUMMARIZE = SPECS.find((s) => s.file === "summarize.yaml")!.text;

/** `text` with line `n` (1-based) replaced. */
const withLine = (text: string, n: number, line: string) =>
  text
    .split("\n")
    .map((l, i) => (i === n - 1 ? line : l))
    .join("\n");
const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

function explain(text: string): YamlProblem {
  const doc = parseDocument(text, { prettyErrors: false });
  expect(doc.errors.length, "the text must not parse").toBeGreaterThan(0);
  return explainYaml(text, doc.errors);
}

function applyFix(text: string, problem: YamlProblem): string {
  expect(problem.quickFix).not.toBeNull();
  return applyQuickFix(text, problem.quickFix!);
}

describe("YAML errors as one clear problem", () => {
  it("finds nothing wrong in any example spec", () => {
    for (const { file, text } of SPECS) expect(scanStructure(text), file).toBeNull();
  });

  it("one Backspace in a key's indentation: that key, in words, with a fix that works", () => {
    const n = lineOf(SUMMARIZE, "      kind: python");
    const broken = withLine(SUMMARIZE, n, "     kind: python");
    const problem = explain(broken);
    expect([problem.line, problem.code]).toEqual([n, "yaml-indentation"]);
    expect(problem.message).toContain("`kind`");
    expect(problem.fix).toContain("column 7");
    expect(applyFix(broken, problem)).toBe(SUMMARIZE);
  });

  it("a key one space short of its siblings lines up with nothing", () => {
    const n = lineOf(SUMMARIZE, "      function: plait_examples");
    const broken = withLine(SUMMARIZE, n, SUMMARIZE.split("\n")[n - 1].slice(1));
    const problem = explain(broken);
    expect([problem.line, problem.column, problem.code]).toEqual([n, 6, "yaml-indentation"]);
    expect(problem.message).toContain("lines up with no key");
    expect(applyFix(broken, problem)).toBe(SUMMARIZE);
  });

  it("an unclosed bracket is reported where it was opened", () => {
    const lines = SUMMARIZE.split("\n");
    lines.splice(5, 0, "  : broken: [unclosed");
    const problem = explain(lines.join("\n"));
    expect([problem.line, problem.column, problem.code]).toEqual([6, 13, "yaml-unclosed"]);
    expect(problem.message).toContain("never closed");
    const input = lineOf(SUMMARIZE, "input: [text]");
    const open = explain(withLine(SUMMARIZE, input, "  input: [text"));
    expect([open.line, open.column]).toEqual([input, 10]);
    expect(applyFix(withLine(SUMMARIZE, input, "  input: [text"), open)).toBe(SUMMARIZE);
  });

  it("an unclosed quote, a tab, a duplicate key, a `: ` in a value", () => {
    const prompt = lineOf(SUMMARIZE, 'prompt: "{{');
    const quote = explain(withLine(SUMMARIZE, prompt, '      prompt: "{{ state.cleaned.text }}'));
    expect([quote.line, quote.code]).toEqual([prompt, "yaml-unclosed"]);
    expect(quote.message).toContain('`"`');

    const kind = lineOf(SUMMARIZE, "      kind: python");
    const tab = explain(withLine(SUMMARIZE, kind, "\t  kind: python"));
    expect([tab.line, tab.code]).toEqual([kind, "yaml-tab"]);

    const dup = explain(withLine(SUMMARIZE, kind, "      kind: python\n      kind: llm"));
    expect([dup.line, dup.code]).toEqual([kind + 1, "yaml-duplicate-key"]);
    expect(dup.message).toContain("`kind`");

    const system = lineOf(SUMMARIZE, "system: Summarise");
    const colon = withLine(SUMMARIZE, system, "      system: Summarise: one sentence");
    const problem = explain(colon);
    expect([problem.line, problem.code]).toEqual([system, "yaml-syntax"]);
    expect(problem.message).toContain("`: `");
    expect(parseDocument(applyFix(colon, problem)).get("spec")).toBeTruthy();
    expect(parseDocument(applyFix(colon, problem)).errors).toEqual([]);
  });

  it("a Backspace in any indented line of any example: the problem is on that line, and its fix parses", () => {
    let total = 0;
    let located = 0;
    let fixed = 0;
    for (const { text } of SPECS) {
      const lines = text.split("\n");
      lines.forEach((line, i) => {
        if (!/^ +\S/.test(line) || line.trim().startsWith("#")) return;
        const broken = withLine(text, i + 1, line.slice(1));
        const doc = parseDocument(broken, { prettyErrors: false });
        if (doc.errors.length === 0) return; // still valid YAML (e.g. inside a block of text)
        total++;
        const problem = explainYaml(broken, doc.errors);
        if (problem.line === i + 1) located++;
        if (problem.quickFix && parseDocument(applyQuickFix(broken, problem.quickFix)).errors.length === 0) fixed++;
      });
    }
    expect(total).toBeGreaterThan(300);
    // Measured: 98% located, 95% fixed in one click; the rest are ambiguous
    // (either of two lines may be the one that moved).
    expect(located / total).toBeGreaterThan(0.95);
    expect(fixed / total).toBeGreaterThan(0.9);
  }, 60_000); // ~450 broken texts, each parsed a few times
});
