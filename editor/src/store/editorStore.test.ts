import { beforeEach, describe, expect, it } from "vitest";
import { addNode, connect } from "../spec/edit";
import { isDirty, redo, undo, useEditorStore } from "./editorStore";

const YAML = `# keep me
apiVersion: plait/v1
kind: Graph
metadata: {name: demo, version: "1.0.0"}
spec:
  nodes:
    a: {kind: python, function: m:f} # node a
  edges:
    - {from: START, to: a}
`;

const store = () => useEditorStore.getState();
const history = () => useEditorStore.temporal.getState();

beforeEach(() => store().load({ name: "demo", version: "1.0.0", yaml: YAML, positions: { a: { x: 1, y: 2 } } }));

describe("editor store", () => {
  it("loads text, derives the model and starts with an empty history", () => {
    expect(store().yaml).toBe(YAML);
    expect(store().baseYaml).toBe(YAML);
    expect(store().model.nodes.map((n) => n.id)).toEqual(["a"]);
    expect(history().pastStates).toHaveLength(0);
  });

  it("undoes and redoes canvas edits, re-deriving the model", () => {
    expect(store().edit((doc) => addNode(doc, "llm"))).toBe("llm");
    store().edit((doc) => connect(doc, "a", "llm"));
    expect(store().model.edges.map((e) => `${e.source}>${e.target}`)).toContain("a>llm");
    undo();
    expect(store().model.edges.map((e) => `${e.source}>${e.target}`)).not.toContain("a>llm");
    expect(store().model.nodes.map((n) => n.id)).toEqual(["a", "llm"]);
    undo();
    expect(store().yaml).toBe(YAML);
    expect(store().model.nodes.map((n) => n.id)).toEqual(["a"]);
    redo();
    redo();
    expect(store().model.edges.map((e) => `${e.source}>${e.target}`)).toContain("a>llm");
    expect(store().yaml).toContain("# keep me");
    expect(store().yaml).toContain("# node a");
  });

  it("makes one undo step of a typing burst, separate from a canvas edit before it", () => {
    store().edit((doc) => addNode(doc, "tool"));
    const afterEdit = store().yaml;
    store().setYaml(afterEdit + "#", { typing: true });
    store().setYaml(afterEdit + "#x", { typing: true });
    store().setYaml(afterEdit + "#xy", { typing: true });
    undo();
    expect(store().yaml).toBe(afterEdit);
    undo();
    expect(store().yaml).toBe(YAML);
  });

  it("keeps the last good model while the text does not parse", () => {
    store().setYaml(YAML + "oops: a: b\n");
    expect(store().parseProblems.some((p) => p.severity === "error")).toBe(true);
    expect(store().model.nodes.map((n) => n.id)).toEqual(["a"]);
    expect(store().edit((doc) => addNode(doc, "tool"))).toBeUndefined();
    undo();
    expect(store().parseProblems).toEqual([]);
  });

  it("keeps positions, selection and issues out of the YAML and out of undo", () => {
    store().setPositions({ a: { x: 50, y: 60 }, START: { x: 0, y: 0 } });
    store().select(["a"]);
    store().setServerIssues([{ message: "x", pointer: "/spec/nodes/a" }]);
    expect(store().yaml).toBe(YAML);
    expect(history().pastStates).toHaveLength(0);
    expect(store().positions.a).toEqual({ x: 50, y: 60 });
  });

  it("marks a saved version as the new base", () => {
    store().edit((doc) => addNode(doc, "tool"));
    store().markSaved("1.0.1");
    expect(store().version).toBe("1.0.1");
    expect(store().baseYaml).toBe(store().yaml);
  });

  it("keeps a node's position when its key is retyped in the YAML", () => {
    store().setYaml(YAML.replace("    a: {kind", "    b: {kind"), { typing: true });
    expect(store().model.nodes.map((n) => n.id)).toEqual(["b"]);
    expect(store().positions.b).toEqual({ x: 1, y: 2 });
  });

  it("renames a node with its edges, position and selection", () => {
    store().select(["a"]);
    expect(store().rename("a", "START")).toMatch(/reserved/);
    expect(store().rename("a", "9x")).toMatch(/letters, digits/);
    expect(store().rename("a", "first")).toBeNull();
    expect(store().yaml).toContain("    first: {kind: python, function: m:f} # node a");
    expect(store().yaml).toContain("- {from: START, to: first}");
    expect(store().positions.first).toEqual({ x: 1, y: 2 });
    expect(store().selectedNodes).toEqual(["first"]);
  });

  it("is dirty on text, layout or a graph never saved", () => {
    expect(isDirty(store())).toBe(false);
    store().setPositions({ a: { x: 5, y: 5 } });
    expect(isDirty(store())).toBe(true);
    store().markSaved("1.0.0");
    expect(isDirty(store())).toBe(false);
    store().load({ name: "n", version: "0.1.0", yaml: YAML, isNew: true });
    expect(isDirty(store())).toBe(true);
  });
});
