/**
 * Canvas edits applied to the YAML Document.
 *
 * Every edit goes through the `yaml` package's Document API (never through
 * re-serialising plain data); `applyEdit` parses the text, runs one edit and
 * splices what it changed into the text (splice.ts), so everything the edit
 * does not touch keeps its bytes: comments and their spacing, blank lines,
 * key order, folded and literal blocks, flow / block styles.
 */
import { Document, isMap, isScalar, isSeq, parseDocument, YAMLMap, YAMLSeq, type Pair } from "yaml";
import { END, START, type GraphEdge } from "./model";
import { PRINT_OPTIONS, printEdited, snapshot } from "./splice";

export { PRINT_OPTIONS };

/**
 * Parse `text`, apply `edit` to its Document, return the new text and the
 * edit's result. Only what the edit changed is printed; everything else keeps
 * its bytes (splice.ts).
 */
export function applyEdit<T>(text: string, edit: (doc: Document) => T): { text: string; result: T } {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new Error(`the YAML has errors: ${doc.errors[0].message}`);
  const before = snapshot(doc);
  const result = edit(doc);
  return { text: printEdited(text, doc, before), result };
}

/** The `spec.nodes` map, created (block style) when missing. */
function nodesMap(doc: Document): YAMLMap {
  let nodes = doc.getIn(["spec", "nodes"], true);
  if (!isMap(nodes)) {
    doc.setIn(["spec", "nodes"], doc.createNode({}));
    nodes = doc.getIn(["spec", "nodes"], true);
    (nodes as YAMLMap).flow = false;
  }
  return nodes as YAMLMap;
}

/** The `spec.edges` sequence, created (block style) when missing. */
function edgesSeq(doc: Document): YAMLSeq {
  let edges = doc.getIn(["spec", "edges"], true);
  if (!isSeq(edges)) {
    doc.setIn(["spec", "edges"], doc.createNode([]));
    edges = doc.getIn(["spec", "edges"], true);
    (edges as YAMLSeq).flow = false;
  }
  return edges as YAMLSeq;
}

function keyOf(pair: Pair): string | null {
  return isScalar(pair.key) ? String(pair.key.value) : typeof pair.key === "string" ? pair.key : null;
}

/** Ids of the nodes in the Document. */
export function nodeIds(doc: Document): string[] {
  const nodes = doc.getIn(["spec", "nodes"], true);
  return isMap(nodes) ? nodes.items.map(keyOf).filter((k): k is string => k !== null) : [];
}

/** `base`, or `base_2`, `base_3`, ... : the first id not taken. Ids follow the spec's identifier rule. */
export function uniqueId(taken: Iterable<string>, base: string): string {
  const used = new Set(taken);
  const clean = base.replace(/[^A-Za-z0-9_]/g, "_").replace(/^(?=[0-9])/, "n_") || "node";
  if (!used.has(clean) && clean !== START && clean !== END) return clean;
  const stem = clean.replace(/_\d+$/, "");
  for (let i = 2; ; i++) {
    const candidate = `${stem}_${i}`;
    if (!used.has(candidate)) return candidate;
  }
}

function firstKey(doc: Document, section: string, fallback: string): string {
  const map = doc.getIn(["spec", section], true);
  if (isMap(map) && map.items.length > 0) return keyOf(map.items[0]) ?? fallback;
  return fallback;
}

/**
 * The smallest node of `kind` that the schema accepts, referring to the spec's
 * first model / tool when it has one (the linter then only asks for what the
 * author must decide).
 */
export function nodeTemplate(doc: Document, kind: string): Record<string, unknown> {
  switch (kind) {
    case "agent":
      return { kind, model: firstKey(doc, "models", "model"), prompt: "{{ state }}" };
    case "llm":
      return { kind, model: firstKey(doc, "models", "model"), prompt: "{{ state }}" };
    case "tool":
      return { kind, tool: firstKey(doc, "tools", "tool") };
    case "router":
      return { kind, label: "'default'" };
    case "map":
      return { kind, items: "[]", do: { kind: "python", function: "module:function" } };
    case "parallel":
      return { kind, branches: ["branch_a", "branch_b"], join: "join" };
    case "subgraph":
      return { kind, ref: "graph@1.0.0" };
    case "approval":
      return { kind, action: "action" };
    case "wait":
      return { kind, for: "10m" };
    case "a2a":
      return { kind, url: "http://127.0.0.1:9000", message: "{{ state }}" };
    case "python":
      return { kind, function: "module:function" };
    default:
      return { kind };
  }
}

/** Add a node of `kind` with a fresh id (`<kind>`, `<kind>_2`, ...); returns the id. */
export function addNode(doc: Document, kind: string, id?: string): string {
  const nodes = nodesMap(doc);
  const newId = uniqueId(nodeIds(doc), id ?? kind);
  const body = doc.createNode(nodeTemplate(doc, kind)) as YAMLMap;
  nodes.add(doc.createPair(newId, body));
  return newId;
}

/** Whether an edges list writes its items as flow maps (`- {from: a, to: b}`). */
function prefersFlow(seq: YAMLSeq): boolean {
  const maps = seq.items.filter(isMap);
  if (maps.length === 0) return true;
  return maps.filter((m) => m.flow).length * 2 >= maps.length;
}

/** Add a static edge `{from, to}` (no duplicate); returns whether it was added. */
export function connect(doc: Document, from: string, to: string): boolean {
  const seq = edgesSeq(doc);
  const exists = seq.items.some((item) => isMap(item) && item.get("from") === from && item.get("to") === to && !item.has("switch") && !item.has("route"));
  if (exists || from === END || to === START) return false;
  const edge = doc.createNode({ from, to }) as YAMLMap;
  edge.flow = prefersFlow(seq);
  seq.add(edge);
  return true;
}

/**
 * Remove the edges of the canvas (ids from model.ts). Removing a switch case
 * that leaves no case turns the switch into a static edge to its default; a
 * route losing its last label goes away unless it has a default. Derived
 * parallel edges remove the branch from the parallel node.
 */
export function disconnect(doc: Document, edges: GraphEdge[]): void {
  const seq = doc.getIn(["spec", "edges"], true);
  const removeItems = new Set<number>();
  // Work from the highest index down so earlier indexes stay valid.
  const sorted = [...edges].sort((a, b) => (b.edgeIndex ?? -1) - (a.edgeIndex ?? -1) || String(b.key).localeCompare(String(a.key)));
  for (const edge of sorted) {
    if (edge.kind === "branch" || edge.kind === "join") {
      // Ids of derived edges are `p:<parallel>:<branch>` / `j:<parallel>:<branch>`.
      const parallelId = edge.id.split(":")[1];
      const branches = doc.getIn(["spec", "nodes", parallelId, "branches"], true);
      if (isSeq(branches)) {
        const i = branches.items.findIndex((b) => isScalar(b) && b.value === edge.key);
        if (i >= 0) branches.items.splice(i, 1);
      }
      continue;
    }
    if (!isSeq(seq) || edge.edgeIndex === null) continue;
    const item = seq.items[edge.edgeIndex];
    if (!isMap(item)) continue;
    if (edge.kind === "static") removeItems.add(edge.edgeIndex);
    else if (edge.kind === "case") {
      const cases = item.get("switch", true);
      if (isSeq(cases)) cases.items.splice(Number(edge.key), 1);
      if (!isSeq(cases) || cases.items.length === 0) {
        const def = item.get("default");
        item.delete("switch");
        item.delete("default");
        if (typeof def === "string") item.set("to", def);
        else removeItems.add(edge.edgeIndex);
      }
    } else if (edge.kind === "default" || edge.kind === "route-default") {
      item.delete("default");
    } else if (edge.kind === "route") {
      const to = item.get("to", true);
      if (isMap(to)) to.delete(String(edge.key));
      if ((!isMap(to) || to.items.length === 0) && !item.has("default")) removeItems.add(edge.edgeIndex);
    }
  }
  if (isSeq(seq)) [...removeItems].sort((a, b) => b - a).forEach((i) => seq.items.splice(i, 1));
}

/**
 * Remove nodes and every edge touching them: edges from them go; a switch case
 * or route label pointing at them goes (see `disconnect`); a switch or route
 * default pointing at them is dropped; parallel branches naming them go.
 */
export function removeNodes(doc: Document, ids: string[]): void {
  const gone = new Set(ids);
  const nodes = doc.getIn(["spec", "nodes"], true);
  if (isMap(nodes)) nodes.items = nodes.items.filter((p) => !gone.has(keyOf(p) ?? ""));
  const seq = doc.getIn(["spec", "edges"], true);
  if (isSeq(seq)) {
    seq.items = seq.items.filter((item) => {
      if (!isMap(item)) return true;
      if (gone.has(String(item.get("from")))) return false;
      const cases = item.get("switch", true);
      if (isSeq(cases)) {
        cases.items = cases.items.filter((c) => !(isMap(c) && gone.has(String(c.get("to")))));
        const def = item.get("default");
        if (typeof def === "string" && gone.has(def)) item.delete("default");
        if (cases.items.length === 0) {
          const fallback = item.get("default");
          if (typeof fallback !== "string") return false;
          item.delete("switch");
          item.delete("default");
          item.set("to", fallback);
        }
        return true;
      }
      if (item.has("route")) {
        const to = item.get("to", true);
        if (isMap(to)) to.items = to.items.filter((p) => !(isScalar(p.value) && gone.has(String(p.value.value))));
        const def = item.get("default");
        if (typeof def === "string" && gone.has(def)) item.delete("default");
        return (isMap(to) && to.items.length > 0) || item.has("default");
      }
      return !gone.has(String(item.get("to")));
    });
  }
  if (isMap(nodes)) {
    for (const pair of nodes.items) {
      if (!isMap(pair.value)) continue;
      const branches = pair.value.get("branches", true);
      if (isSeq(branches)) branches.items = branches.items.filter((b) => !(isScalar(b) && gone.has(String(b.value))));
    }
  }
}

/** Node ids follow the spec's identifier rule. */
export const NODE_ID_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why `id` cannot be a new node id (null: it can). */
export function nodeIdProblem(doc: Document, id: string, current?: string): string | null {
  if (!NODE_ID_PATTERN.test(id)) return "a node id is letters, digits and `_`, not starting with a digit";
  if (id === START || id === END) return `${id} is reserved for the graph's ends`;
  if (id !== current && nodeIds(doc).includes(id)) return `there is already a node ${id}`;
  return null;
}

/** Set a scalar's value in place when it is `from` (its style and comment stay). */
function renameScalar(node: unknown, from: string, to: string): void {
  if (isScalar(node) && node.value === from) node.value = to;
}

/**
 * Rename node `from` to `to`: its key, every edge end, switch case, default
 * and route target naming it, parallel branches and joins, and `on_reject`.
 * Only those scalars change, in place. Throws when `to` cannot be an id.
 */
export function renameNode(doc: Document, from: string, to: string): void {
  if (from === to) return;
  const problem = nodeIdProblem(doc, to, from);
  if (problem) throw new Error(problem);
  const nodes = doc.getIn(["spec", "nodes"], true);
  if (!isMap(nodes)) throw new Error(`no node ${from}`);
  const pair = nodes.items.find((p) => keyOf(p) === from);
  if (!pair || !isScalar(pair.key)) throw new Error(`no node ${from}`);
  pair.key.value = to;
  for (const other of nodes.items) {
    if (!isMap(other.value)) continue;
    renameScalar(other.value.get("join", true), from, to);
    renameScalar(other.value.get("on_reject", true), from, to);
    const branches = other.value.get("branches", true);
    if (isSeq(branches)) branches.items.forEach((b) => renameScalar(b, from, to));
  }
  const edges = doc.getIn(["spec", "edges"], true);
  if (!isSeq(edges)) return;
  for (const item of edges.items) {
    if (!isMap(item)) continue;
    for (const key of ["from", "default"]) renameScalar(item.get(key, true), from, to);
    const target = item.get("to", true);
    if (isMap(target)) target.items.forEach((p) => renameScalar(p.value, from, to));
    else renameScalar(target, from, to);
    const cases = item.get("switch", true);
    if (isSeq(cases)) cases.items.forEach((c) => isMap(c) && renameScalar(c.get("to", true), from, to));
  }
}

/**
 * Set (or, with `undefined`, delete) a field of a node: `path` is relative to
 * the node, e.g. `["prompt"]` or `["retry", "max_attempts"]`.
 */
export function setField(doc: Document, nodeId: string, path: (string | number)[], value: unknown): void {
  const full = ["spec", "nodes", nodeId, ...path];
  if (!doc.hasIn(["spec", "nodes", nodeId])) throw new Error(`no node ${nodeId}`);
  if (value === undefined) {
    doc.deleteIn(full);
    return;
  }
  const existing = doc.getIn(full, true);
  if (isScalar(existing) && (value === null || typeof value !== "object")) {
    // Keep the scalar node (and its comment); only its value changes. A plain
    // string that YAML would read as another type is quoted by the printer.
    existing.value = value;
    return;
  }
  const node = doc.createNode(value);
  if ((isMap(existing) || isSeq(existing)) && (isMap(node) || isSeq(node))) {
    node.flow = existing.flow;
    node.commentBefore = existing.commentBefore;
    node.comment = existing.comment;
  }
  doc.setIn(full, node);
}

/** The YAML text of some nodes (a map id -> body) for the clipboard. */
export function copyNodes(doc: Document, ids: string[]): string {
  const nodes = doc.getIn(["spec", "nodes"], true);
  const out = new YAMLMap();
  if (isMap(nodes)) {
    for (const pair of nodes.items) {
      const id = keyOf(pair);
      if (id !== null && ids.includes(id)) out.items.push(doc.createPair(id, (pair.value as YAMLMap).clone()));
    }
  }
  const clip = new Document();
  clip.contents = out;
  return clip.toString(PRINT_OPTIONS);
}

/**
 * Paste clipboard YAML (from `copyNodes`): every node gets a fresh id
 * (`<id>_2`, ...); static edges between pasted nodes are pasted too, renamed.
 * Returns old id -> new id.
 */
export function pasteNodes(doc: Document, clipboard: string, sourceEdges: { from: string; to: string }[] = []): Record<string, string> {
  const clip = parseDocument(clipboard);
  if (clip.errors.length > 0 || !isMap(clip.contents)) return {};
  const nodes = nodesMap(doc);
  const taken = new Set(nodeIds(doc));
  const renamed: Record<string, string> = {};
  for (const pair of clip.contents.items) {
    const id = keyOf(pair);
    if (id === null || !isMap(pair.value)) continue;
    const newId = uniqueId(taken, id);
    taken.add(newId);
    renamed[id] = newId;
    nodes.add(doc.createPair(newId, pair.value));
  }
  for (const edge of sourceEdges) {
    if (renamed[edge.from] && renamed[edge.to]) connect(doc, renamed[edge.from], renamed[edge.to]);
  }
  return renamed;
}
