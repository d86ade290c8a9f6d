import { beforeEach, describe, expect, it } from "vitest";
import { newGraphDrafts, readDraft, removeDraft, writeDraft } from "./drafts";
import { useEditorStore } from "./editorStore";
import { keepDraft } from "./useDraftKeeper";

/** A localStorage for the node test environment. */
class MemoryStorage implements Storage {
  private items = new Map<string, string>();
  get length() {
    return this.items.size;
  }
  clear() {
    this.items.clear();
  }
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  key(i: number) {
    return [...this.items.keys()][i] ?? null;
  }
  removeItem(key: string) {
    this.items.delete(key);
  }
  setItem(key: string, value: string) {
    this.items.set(key, value);
  }
}

const YAML = 'apiVersion: plait/v1\nkind: Graph\nmetadata: {name: demo, version: "1.0.0"}\nspec:\n  nodes:\n    a: {kind: python, function: m:f}\n';

beforeEach(() => {
  (globalThis as { localStorage?: Storage }).localStorage = new MemoryStorage();
});

describe("drafts in the browser", () => {
  it("keeps one draft per graph and version", () => {
    writeDraft({ graph: "demo", version: "1.0.0", yaml: "a", baseYaml: "b", positions: { a: { x: 1, y: 2 } }, isNew: false });
    writeDraft({ graph: "demo", version: "1.0.1", yaml: "c", baseYaml: "d", positions: {}, isNew: false });
    writeDraft({ graph: "fresh", version: "0.1.0", yaml: "e", baseYaml: "e", positions: {}, isNew: true });
    expect(readDraft("demo", "1.0.0")).toMatchObject({ yaml: "a", baseYaml: "b", positions: { a: { x: 1, y: 2 } } });
    expect(readDraft("demo", "1.0.1")?.yaml).toBe("c");
    expect(newGraphDrafts().map((d) => d.graph)).toEqual(["fresh"]);
    removeDraft("demo", "1.0.0");
    expect(readDraft("demo", "1.0.0")).toBeNull();
    localStorage.setItem("plait.draft.v1:broken@1.0.0", "{not json");
    expect(readDraft("broken", "1.0.0")).toBeNull();
  });

  it("writes the open graph's draft while it has unsaved edits, and removes it once saved", () => {
    const store = useEditorStore.getState();
    store.load({ name: "demo", version: "1.0.0", yaml: YAML });
    keepDraft(useEditorStore.getState());
    expect(readDraft("demo", "1.0.0")).toBeNull();
    store.setYaml(YAML.replace("m:f", "m:g"));
    keepDraft(useEditorStore.getState());
    expect(readDraft("demo", "1.0.0")).toMatchObject({ yaml: YAML.replace("m:f", "m:g"), baseYaml: YAML, isNew: false });
    useEditorStore.getState().markSaved("1.0.0");
    keepDraft(useEditorStore.getState());
    expect(readDraft("demo", "1.0.0")).toBeNull();
  });
});
