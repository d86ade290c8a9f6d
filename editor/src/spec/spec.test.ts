import { readFileSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { addNode, applyEdit, connect, copyNodes, disconnect, nodeTemplate, pasteNodes, removeNodes, setField, uniqueId } from "./edit";
import { lineOfPointer, NODE_KINDS, nodeIdFromPointer, parseSpec } from "./model";

const SPEC = `# yaml-language-server: $schema=../schemas/plait-v1.schema.json
# Top comment.
apiVersion: plait/v1
kind: Graph
metadata:
  name: demo
  version: "1.0.0"
spec:
  models:
    fast: {provider: scripted} # the scripted model
  tools:
    lookup: {function: pkg.mod:lookup}
  nodes:
    # The first node.
    classify:
      kind: llm
      model: fast # model comment
      prompt: "Classify {{ state.text }}"
    pick:
      kind: router
      label: state.kind
    fetch:
      kind: tool
      tool: lookup
    answer:
      kind: agent
      model: fast
      prompt: Answer.
    both:
      kind: parallel
      branches: [fetch, answer]
      join: done
    done:
      kind: python
      function: pkg.mod:done
  edges:
    - {from: START, to: classify} # entry
    - from: classify
      switch:
        - {when: "state.kind == 'a'", to: pick}
        - {when: "state.kind == 'b'", to: fetch}
      default: answer
    - from: pick
      route: result
      to: {x: fetch, y: answer}
      default: done
    - {from: done, to: END}
`;

const model = (text: string) => {
  const parsed = parseSpec(text);
  expect(parsed.problems.filter((p) => p.severity === "error")).toEqual([]);
  return parsed.model!;
};

describe("model: YAML -> graph", () => {
  it("reads nodes with kinds, fields and lines", () => {
    const m = model(SPEC);
    expect(m.name).toBe("demo");
    expect(m.version).toBe("1.0.0");
    expect(m.nodes.map((n) => [n.id, n.kind])).toEqual([
      ["classify", "llm"],
      ["pick", "router"],
      ["fetch", "tool"],
      ["answer", "agent"],
      ["both", "parallel"],
      ["done", "python"],
    ]);
    expect(m.nodes[0].fields.model).toBe("fast");
    expect(m.nodes[0].line).toBe(SPEC.split("\n").indexOf("    classify:") + 1);
  });

  it("reads every edge form with its label", () => {
    const m = model(SPEC);
    const edges = m.edges.map((e) => [e.id, e.source, e.target, e.kind, e.label]);
    expect(edges).toEqual([
      ["e0", "START", "classify", "static", null],
      ["e1:case0", "classify", "pick", "case", "state.kind == 'a'"],
      ["e1:case1", "classify", "fetch", "case", "state.kind == 'b'"],
      ["e1:default", "classify", "answer", "default", "default"],
      ["e2:route:x", "pick", "fetch", "route", "x"],
      ["e2:route:y", "pick", "answer", "route", "y"],
      ["e2:default", "pick", "done", "route-default", "default"],
      ["e3", "done", "END", "static", null],
      ["p:both:fetch", "both", "fetch", "branch", null],
      ["j:both:fetch", "fetch", "done", "join", null],
      ["p:both:answer", "both", "answer", "branch", null],
      ["j:both:answer", "answer", "done", "join", null],
    ]);
    expect(m.usesEnd).toBe(true);
  });

  it("reports YAML errors with a line and no model", () => {
    const parsed = parseSpec("spec:\n  nodes: [a\n");
    expect(parsed.model).toBeNull();
    expect(parsed.problems[0].severity).toBe("error");
    expect(parsed.problems[0].line).toBeGreaterThan(0);
  });

  it("maps JSON pointers to nodes and lines", () => {
    expect(nodeIdFromPointer("/spec/nodes/fetch/tool")).toBe("fetch");
    expect(nodeIdFromPointer("/spec/nodes/a~1b")).toBe("a/b");
    expect(nodeIdFromPointer("/spec/edges/0")).toBeNull();
    expect(lineOfPointer(SPEC, "/spec/nodes/fetch/tool")).toBe(SPEC.split("\n").indexOf("      tool: lookup") + 1);
    expect(lineOfPointer(SPEC, "/spec/edges/1/switch/1")).toBe(SPEC.split("\n").indexOf("        - {when: \"state.kind == 'b'\", to: fetch}") + 1);
    // A missing tail still lands on the deepest existing key.
    expect(lineOfPointer(SPEC, "/spec/nodes/fetch/nope")).toBe(SPEC.split("\n").indexOf("    fetch:") + 1);
  });

  it("reads every example spec in specs/", () => {
    const dir = new URL("../../../specs/", import.meta.url);
    const files = readdirSync(dir).filter((f) => f.endsWith(".yaml"));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const m = model(readFileSync(new URL(f, dir), "utf8"));
      expect(m.nodes.length).toBeGreaterThan(0);
      for (const e of m.edges) {
        const ids = new Set([...m.nodes.map((n) => n.id), "START", "END"]);
        expect(ids.has(e.source) && ids.has(e.target), `${f}: ${e.id}`).toBe(true);
      }
    }
  });
});

describe("edit: canvas edits through the Document API", () => {
  const keepsComments = (text: string) => {
    for (const c of ["# Top comment.", "# the scripted model", "# The first node.", "# model comment", "# entry", "# yaml-language-server"])
      expect(text).toContain(c);
  };

  it("adds a valid-looking node of every kind with a unique id", () => {
    let text = SPEC;
    for (const kind of NODE_KINDS) {
      const { text: next, result } = applyEdit(text, (doc) => addNode(doc, kind));
      expect(result).toBe(kind);
      const node = model(next).nodes.find((n) => n.id === kind)!;
      expect(node.kind).toBe(kind);
      text = next;
    }
    const again = applyEdit(text, (doc) => addNode(doc, "llm"));
    expect(again.result).toBe("llm_2");
    keepsComments(again.text);
    // Templates refer to the spec's own model and tool.
    const doc = parseDocument(SPEC);
    expect(nodeTemplate(doc, "llm").model).toBe("fast");
    expect(nodeTemplate(doc, "tool").tool).toBe("lookup");
  });

  it("keeps the rest of the text byte for byte when adding a node", () => {
    const { text } = applyEdit(SPEC, (doc) => addNode(doc, "python"));
    expect(text.startsWith(SPEC.slice(0, SPEC.indexOf("  edges:")))).toBe(true);
    expect(text).toContain("    python:\n      kind: python\n      function: module:function\n  edges:");
    expect(text.endsWith(SPEC.slice(SPEC.indexOf("  edges:")))).toBe(true);
  });

  it("connects with a static flow edge and no duplicates", () => {
    const { text, result } = applyEdit(SPEC, (doc) => connect(doc, "fetch", "END"));
    expect(result).toBe(true);
    expect(text).toContain("    - {from: done, to: END}\n    - {from: fetch, to: END}\n");
    keepsComments(text);
    expect(applyEdit(text, (doc) => connect(doc, "fetch", "END")).result).toBe(false);
    expect(applyEdit(text, (doc) => connect(doc, "END", "fetch")).result).toBe(false);
    expect(model(text).edges.find((e) => e.source === "fetch" && e.target === "END")?.kind).toBe("static");
  });

  it("creates the edges list when there is none", () => {
    const bare = 'apiVersion: plait/v1\nkind: Graph\nmetadata: {name: x, version: "1.0.0"}\nspec:\n  nodes:\n    a: {kind: python, function: m:f}\n';
    const { text } = applyEdit(bare, (doc) => connect(doc, "START", "a"));
    expect(text).toContain("  edges:\n    - {from: START, to: a}\n");
  });

  it("removes a node and every edge touching it", () => {
    const { text } = applyEdit(SPEC, (doc) => removeNodes(doc, ["fetch"]));
    const m = model(text);
    expect(m.nodes.map((n) => n.id)).not.toContain("fetch");
    expect(m.edges.some((e) => e.source === "fetch" || e.target === "fetch")).toBe(false);
    // The switch keeps its other case; the route keeps its other label.
    expect(m.edges.map((e) => e.id)).toContain("e1:case0");
    expect(m.edges.map((e) => e.id)).toContain("e2:route:y");
    keepsComments(text);
  });

  it("turns a switch without cases into a static edge to its default", () => {
    const { text } = applyEdit(SPEC, (doc) => removeNodes(doc, ["pick", "fetch"]));
    const m = model(text);
    expect(m.edges.filter((e) => e.source === "classify").map((e) => [e.kind, e.target])).toEqual([["static", "answer"]]);
    expect(m.edges.some((e) => e.source === "pick")).toBe(false);
  });

  it("disconnects each edge form", () => {
    const m = model(SPEC);
    const byId = (id: string) => m.edges.find((e) => e.id === id)!;
    const a = model(applyEdit(SPEC, (doc) => disconnect(doc, [byId("e0")])).text);
    expect(a.edges.some((e) => e.source === "START")).toBe(false);
    const b = model(applyEdit(SPEC, (doc) => disconnect(doc, [byId("e1:case1")])).text);
    expect(b.edges.filter((e) => e.source === "classify").map((e) => e.target)).toEqual(["pick", "answer"]);
    const c = model(applyEdit(SPEC, (doc) => disconnect(doc, [byId("e2:route:x"), byId("e2:default")])).text);
    expect(c.edges.filter((e) => e.source === "pick").map((e) => e.label)).toEqual(["y"]);
    const d = model(applyEdit(SPEC, (doc) => disconnect(doc, [byId("p:both:fetch")])).text);
    expect(d.nodes.find((n) => n.id === "both")!.fields.branches).toEqual(["answer"]);
    const e = applyEdit(SPEC, (doc) => disconnect(doc, [byId("e1:case0"), byId("e1:case1")])).text;
    expect(
      model(e)
        .edges.filter((x) => x.source === "classify")
        .map((x) => [x.kind, x.target]),
    ).toEqual([["static", "answer"]]);
  });

  it("sets, replaces and deletes fields keeping comments and key order", () => {
    let { text } = applyEdit(SPEC, (doc) => setField(doc, "classify", ["model"], "other"));
    expect(text).toContain("      model: other # model comment\n");
    ({ text } = applyEdit(text, (doc) => setField(doc, "classify", ["retry"], { max_attempts: 2 })));
    ({ text } = applyEdit(text, (doc) => setField(doc, "classify", ["max_visits"], 3)));
    const classify = model(text).nodes[0];
    expect(Object.keys(classify.fields)).toEqual(["kind", "model", "prompt", "retry", "max_visits"]);
    expect(classify.fields.retry).toEqual({ max_attempts: 2 });
    ({ text } = applyEdit(text, (doc) => setField(doc, "classify", ["prompt"], undefined)));
    expect(model(text).nodes[0].fields.prompt).toBeUndefined();
    // A string that reads as another type stays a string.
    ({ text } = applyEdit(text, (doc) => setField(doc, "classify", ["model"], "no")));
    expect(model(text).nodes[0].fields.model).toBe("no");
    keepsComments(text);
  });

  it("copies and pastes nodes with new ids and their inner edges", () => {
    const clip = applyEdit(SPEC, (doc) => copyNodes(doc, ["classify", "done"])).result;
    expect(parseDocument(clip).toJS()).toEqual({
      classify: { kind: "llm", model: "fast", prompt: "Classify {{ state.text }}" },
      done: { kind: "python", function: "pkg.mod:done" },
    });
    const { text, result } = applyEdit(SPEC, (doc) => pasteNodes(doc, clip, [{ from: "classify", to: "done" }]));
    expect(result).toEqual({ classify: "classify_2", done: "done_2" });
    const m = model(text);
    expect(m.nodes.find((n) => n.id === "classify_2")!.fields).toEqual(m.nodes.find((n) => n.id === "classify")!.fields);
    expect(m.edges.some((e) => e.source === "classify_2" && e.target === "done_2")).toBe(true);
    const twice = applyEdit(text, (doc) => pasteNodes(doc, clip)).result;
    expect(twice).toEqual({ classify: "classify_3", done: "done_3" });
    keepsComments(text);
  });

  it("makes ids that are identifiers and never START/END", () => {
    expect(uniqueId([], "my-node")).toBe("my_node");
    expect(uniqueId([], "3x")).toBe("n_3x");
    expect(uniqueId(["a", "a_2"], "a")).toBe("a_3");
    expect(uniqueId([], "START")).toBe("START_2");
  });

  it("leaves example specs unchanged when an edit is undone by its inverse", () => {
    const dir = new URL("../../../specs/", import.meta.url);
    for (const f of readdirSync(dir).filter((x) => x.endsWith(".yaml"))) {
      const original = readFileSync(new URL(f, dir), "utf8");
      const added = applyEdit(original, (doc) => addNode(doc, "python", "zz_tmp")).text;
      const back = applyEdit(added, (doc) => removeNodes(doc, ["zz_tmp"])).text;
      // Comments survive; the only allowed change is the printer joining a folded block.
      for (const line of original.split("\n").filter((l) => l.trim().startsWith("#"))) expect(back).toContain(line.trim());
      expect(parseDocument(back).toJS()).toEqual(parseDocument(original).toJS());
    }
  });
});
