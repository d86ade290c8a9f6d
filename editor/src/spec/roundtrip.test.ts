/**
 * Byte-for-byte edits over a corpus: every example spec in specs/, each
 * node's fields changed one at a time through the code path the properties
 * form uses (`applyEdit` + `setField`), and the canvas edits. The text diff
 * must be exactly the edited lines: folded and literal blocks, flow style,
 * comments and their spacing elsewhere stay as written.
 */
import { diffLines } from "diff";
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isMap, isScalar, LineCounter, parseDocument, type Node as YamlNode, type Pair } from "yaml";
import { addNode, applyEdit, connect, removeNodes, renameNode, setField } from "./edit";
import { parseSpec } from "./model";

const DIR = new URL("../../../specs/", import.meta.url);
const CORPUS = readdirSync(DIR)
  .filter((f) => f.endsWith(".yaml"))
  .map((f) => ({ file: f, text: readFileSync(new URL(f, DIR), "utf8") }));

/** The 0-based line span [first, end) a node's field occupies in `text`. */
function fieldLines(text: string, nodeId: string, field: string): [number, number] {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  const body = doc.getIn(["spec", "nodes", nodeId], true);
  if (!isMap(body)) throw new Error(`${nodeId} is not a map`);
  const pair = body.items.find((p) => isScalar(p.key) && p.key.value === field) as Pair<YamlNode, YamlNode>;
  const first = counter.linePos(pair.key.range![0]).line - 1;
  const valueRange = (pair.value ?? pair.key).range!;
  // A block value's range ends after its last newline: its last line is the one before.
  const endOffset = text[valueRange[1] - 1] === "\n" ? valueRange[1] - 1 : valueRange[1];
  return [first, counter.linePos(endOffset).line];
}

/** The edited text is `before` with only lines [first, end) replaced (or, with first === end, lines inserted there). */
function expectOnlyLines(before: string, after: string, first: number, end: number, what: string): void {
  const a = before.split("\n");
  const b = after.split("\n");
  expect(b.slice(0, first), `${what}: lines before the edit`).toEqual(a.slice(0, first));
  const tail = a.length - end;
  expect(b.slice(b.length - tail), `${what}: lines after the edit`).toEqual(a.slice(end));
  expect(b.length - tail, `${what}: the edit stays in place`).toBeGreaterThanOrEqual(first);
}

/** Another value of the same shape, so the field really changes. */
function changed(value: unknown): unknown {
  if (typeof value === "string") return value.includes("\n") ? `${value}One more line.\n` : `${value} x`;
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  if (Array.isArray(value)) return [...value, value.every((v) => typeof v === "string") ? "extra" : { extra: 1 }];
  if (value && typeof value === "object") return { ...(value as object), extra: "x" };
  return "x";
}

const nodesOf = (text: string) => parseSpec(text).model!.nodes;

/** The runs of added and removed lines between two texts. */
function chunks(before: string, after: string): { added: string[]; removed: string[] } {
  const parts = diffLines(before, after);
  return { added: parts.filter((p) => p.added).map((p) => p.value), removed: parts.filter((p) => p.removed).map((p) => p.value) };
}

describe("edits touch only what changed (every example spec)", () => {
  it("has a corpus with folded and literal blocks, flow maps and comments", () => {
    const all = CORPUS.map((c) => c.text).join("\n");
    expect(CORPUS.length).toBeGreaterThanOrEqual(8);
    expect(all).toMatch(/: >-\n/);
    expect(all).toMatch(/: \|\n/);
    expect(all).toMatch(/\{from: \w+, to: \w+\}/);
    expect(all).toMatch(/\S {2,}# /);
  });

  for (const { file, text } of CORPUS) {
    it(`${file}: each node field changed alone changes only its own lines`, () => {
      let edits = 0;
      for (const node of nodesOf(text)) {
        for (const [field, value] of Object.entries(node.fields)) {
          const next = changed(value);
          const after = applyEdit(text, (doc) => setField(doc, node.id, [field], next)).text;
          const [first, end] = fieldLines(text, node.id, field);
          expectOnlyLines(text, after, first, end, `${file} ${node.id}.${field}`);
          expect(nodesOf(after).find((n) => n.id === node.id)!.fields[field]).toEqual(next);
          edits++;
        }
      }
      expect(edits).toBeGreaterThan(3);
    });

    it(`${file}: adding and deleting a field changes only that field's lines`, () => {
      for (const node of nodesOf(text)) {
        const fields = Object.keys(node.fields);
        const last = fields[fields.length - 1];
        const [, end] = fieldLines(text, node.id, last);
        const added = applyEdit(text, (doc) => setField(doc, node.id, ["max_visits"], 7)).text;
        if (!fields.includes("max_visits")) {
          expectOnlyLines(text, added, end, end, `${file} ${node.id} + max_visits`);
          expect(added.split("\n").length).toBe(text.split("\n").length + 1);
        }
        const removable = fields.find((f) => f !== "kind");
        if (!removable) continue;
        const [first, stop] = fieldLines(text, node.id, removable);
        const removed = applyEdit(text, (doc) => setField(doc, node.id, [removable], undefined)).text;
        expectOnlyLines(text, removed, first, stop, `${file} ${node.id} - ${removable}`);
        expect(removed.split("\n").length).toBe(text.split("\n").length - (stop - first));
      }
    });

    it(`${file}: canvas edits (add, connect, remove, rename) touch only their lines`, () => {
      const lines = text.split("\n");
      const model = parseSpec(text).model!;
      const ids = model.nodes.map((n) => n.id);

      const added = chunks(text, applyEdit(text, (doc) => addNode(doc, "python", "fresh_node")).text);
      expect(added.removed, `${file} add`).toEqual([]);
      expect(added.added).toHaveLength(1);
      expect(added.added[0]).toMatch(/^ +fresh_node:\n +kind: python\n/);

      const linked = new Set(model.edges.filter((e) => e.kind === "static").map((e) => `${e.source}>${e.target}`));
      const [source, target] = ids.flatMap((a) => [...ids, "END"].map((b) => [a, b])).find(([a, b]) => !linked.has(`${a}>${b}`))!;
      const connected = chunks(text, applyEdit(text, (doc) => connect(doc, source, target)).text);
      expect(connected.removed, `${file} connect`).toEqual([]);
      expect(connected.added, `${file} connect`).toEqual([expect.stringMatching(new RegExp(`^ +- .*${source}.*${target}.*\n$`))]);

      const victim = ids[ids.length - 1];
      const removed = chunks(text, applyEdit(text, (doc) => removeNodes(doc, [victim])).text);
      // Only lines go, but a one-line flow map or list that named the node is written again
      // without it (a route's targets, a switch that became a static edge, `nodes: {}`).
      const gone = removed.removed.join("").split("\n");
      for (const line of removed.added.join("").split("\n").filter(Boolean)) {
        expect(line, `${file} remove ${victim}`).toMatch(/^ +(- )?(\w+: )?[{[].*[}\]]$/);
        expect(
          gone.some((old) => old.startsWith(line.slice(0, line.indexOf(line.trim()) + 2))),
          line,
        ).toBe(true);
      }
      expect(removed.removed.join("")).toContain(`${victim}:`);

      const renamed = applyEdit(text, (doc) => renameNode(doc, ids[0], "renamed_node")).text.split("\n");
      expect(renamed.length).toBe(lines.length);
      renamed.forEach((line, i) => {
        if (line !== lines[i]) expect(lines[i], `${file} rename: line ${i + 1}`).toMatch(new RegExp(`\\b${ids[0]}\\b`));
      });
    });
  }
});
