/**
 * YAML text -> graph model.
 *
 * The YAML text is the source of truth; this module projects it onto what the
 * canvas draws: nodes (id, kind, fields, source line) and edges (one per
 * arrow: a static edge, each case of a switch, its default, each label of a
 * route, its default, and a parallel node's branches and join) and the
 * examples the run form offers. It never
 * mutates anything; edits live in edit.ts.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node as YamlNode } from "yaml";
import { explainYaml, type QuickFix } from "../problems/yamlProblem";

/** The node kinds the palette offers (the spec's kinds plus `a2a`). */
export const NODE_KINDS = ["agent", "llm", "tool", "router", "map", "parallel", "subgraph", "approval", "wait", "a2a", "python"] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

export const START = "START";
export const END = "END";

export interface GraphNode {
  id: string;
  /** The `kind` field as written (may be unknown or missing while typing). */
  kind: string;
  /** The node's mapping as plain JS (everything but its id). */
  fields: Record<string, unknown>;
  /** 1-based line of the node's key in the YAML, for "go to source". */
  line: number | null;
  /** Offsets of the node's text (its key to the end of its body), for the YAML pane's highlight. */
  span: [number, number] | null;
}

export type EdgeKind = "static" | "case" | "default" | "route" | "route-default" | "branch" | "join";

export interface GraphEdge {
  /** Stable while the edges list keeps its order: `e<index>`, `e<index>:case<j>`, ... */
  id: string;
  source: string;
  target: string;
  kind: EdgeKind;
  /** Condition (`when`), route label, or `default`; null for a static edge. */
  label: string | null;
  /** Index in `spec.edges` (null for edges derived from a parallel node). */
  edgeIndex: number | null;
  /** Switch case index, or the route label, for `case` / `route` edges. */
  key: number | string | null;
}

/** One of `spec.examples`: a named input the run form offers. */
export interface SpecExample {
  name: string;
  description?: string;
  input: Record<string, unknown>;
}

/** Names the spec defines, for forms that choose among them. */
export interface Definitions {
  models: string[];
  agents: string[];
  tools: string[];
  state: string[];
}

/** The spec's MCP tools (`kind: mcp`) by name, each with its server, and the named agents' tools. */
export interface McpUse {
  servers: Record<string, string>;
  agentTools: Record<string, string[]>;
}

export interface GraphModel {
  name: string | null;
  version: string | null;
  definitions: Definitions;
  nodes: GraphNode[];
  edges: GraphEdge[];
  examples: SpecExample[];
  mcp: McpUse;
  /** Whether START / END are used by an edge (the canvas shows them always). */
  usesEnd: boolean;
}

/** The model of no graph (before anything parsed). */
export const EMPTY_MODEL: GraphModel = {
  name: null,
  version: null,
  definitions: { models: [], agents: [], tools: [], state: [] },
  nodes: [],
  edges: [],
  examples: [],
  mcp: { servers: {}, agentTools: {} },
  usesEnd: false,
};

export interface ParseProblem {
  message: string;
  /** What to do about it, and a one-click fix when it is mechanical (problems/yamlProblem.ts). */
  fix: string | null;
  code: string;
  quickFix: QuickFix | null;
  /** 1-based line and column. */
  line: number;
  column: number;
  /** Offsets in the text. */
  from: number;
  to: number;
  severity: "error" | "warning";
}

export interface ParsedSpec {
  doc: Document;
  /** Null when the text has YAML errors (the caller keeps its last good model). */
  model: GraphModel | null;
  problems: ParseProblem[];
}

/** Parse YAML text into a Document and, when it parses, its graph model. */
export function parseSpec(text: string): ParsedSpec {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { keepSourceTokens: false, lineCounter, prettyErrors: false });
  const warnings = doc.warnings.map((e) => toProblem(e.message, e.pos, lineCounter, "warning"));
  if (doc.errors.length > 0) {
    // One clear problem, where the mistake is: the parser's other errors follow from it.
    const one = explainYaml(text, doc.errors);
    const error: ParseProblem = { ...one, severity: "error" };
    return { doc, model: null, problems: [error, ...warnings] };
  }
  const problems = warnings;
  return { doc, model: buildModel(doc, lineCounter), problems };
}

function toProblem(message: string, pos: [number, number], lineCounter: LineCounter, severity: "error" | "warning"): ParseProblem {
  const { line, col } = lineCounter.linePos(pos[0]);
  return { message: message.split("\n")[0], fix: null, code: "yaml", quickFix: null, line, column: col, from: pos[0], to: Math.max(pos[1], pos[0]), severity };
}

function plain(value: unknown): unknown {
  return value && typeof value === "object" && "toJSON" in value ? (value as YamlNode).toJSON() : value;
}

function str(value: unknown): string | null {
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : null;
}

function spanOf(key: YamlNode | null, value: YamlNode | null): [number, number] | null {
  const start = key?.range?.[0];
  const end = (value ?? key)?.range?.[1];
  return start === undefined || end === undefined ? null : [start, end];
}

/** Build the model from a parsed (error-free) Document. */
export function buildModel(doc: Document, lineCounter?: LineCounter): GraphModel {
  const lineOf = (node: { range?: [number, number, number] | null } | null | undefined): number | null =>
    node?.range && lineCounter ? lineCounter.linePos(node.range[0]).line : null;

  const nodes: GraphNode[] = [];
  const nodesMap = doc.getIn(["spec", "nodes"], true);
  if (isMap(nodesMap)) {
    for (const pair of nodesMap.items) {
      const id = isScalar(pair.key) ? str(pair.key.value) : null;
      if (id === null) continue;
      const body = plain(pair.value);
      const fields = body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
      nodes.push({
        id,
        kind: typeof fields.kind === "string" ? fields.kind : "",
        fields,
        line: lineOf(pair.key as YamlNode),
        span: spanOf(pair.key as YamlNode, pair.value as YamlNode | null),
      });
    }
  }

  const edges: GraphEdge[] = [];
  const edgesSeq = doc.getIn(["spec", "edges"], true);
  if (isSeq(edgesSeq)) {
    edgesSeq.items.forEach((item, index) => {
      const edge = plain(item) as Record<string, unknown> | null;
      if (!edge || typeof edge !== "object") return;
      const from = str(edge.from);
      if (from === null) return;
      const base = `e${index}`;
      if (Array.isArray(edge.switch)) {
        edge.switch.forEach((c: unknown, j: number) => {
          const kase = c as Record<string, unknown> | null;
          const to = kase ? str(kase.to) : null;
          if (to === null) return;
          const when = kase ? str(kase.when) : null;
          edges.push({ id: `${base}:case${j}`, source: from, target: to, kind: "case", label: when, edgeIndex: index, key: j });
        });
        const def = str(edge.default);
        if (def !== null) edges.push({ id: `${base}:default`, source: from, target: def, kind: "default", label: "default", edgeIndex: index, key: null });
      } else if (edge.route !== undefined) {
        const to = edge.to;
        if (to && typeof to === "object" && !Array.isArray(to)) {
          for (const [label, target] of Object.entries(to as Record<string, unknown>)) {
            const t = str(target);
            if (t !== null) edges.push({ id: `${base}:route:${label}`, source: from, target: t, kind: "route", label, edgeIndex: index, key: label });
          }
        }
        const def = str(edge.default);
        if (def !== null)
          edges.push({ id: `${base}:default`, source: from, target: def, kind: "route-default", label: "default", edgeIndex: index, key: null });
      } else {
        const to = str(edge.to);
        if (to !== null) edges.push({ id: base, source: from, target: to, kind: "static", label: null, edgeIndex: index, key: null });
      }
    });
  }

  // A parallel node fans out to its branches and they meet at its join: the
  // compiler wires those edges, so the canvas shows them (dotted) too.
  for (const node of nodes) {
    if (node.kind !== "parallel") continue;
    const branches = Array.isArray(node.fields.branches) ? node.fields.branches : [];
    const join = str(node.fields.join);
    for (const b of branches) {
      const branch = str(b);
      if (branch === null) continue;
      edges.push({ id: `p:${node.id}:${branch}`, source: node.id, target: branch, kind: "branch", label: null, edgeIndex: null, key: branch });
      if (join !== null) edges.push({ id: `j:${node.id}:${branch}`, source: branch, target: join, kind: "join", label: null, edgeIndex: null, key: branch });
    }
  }

  const examplesSeq = plain(doc.getIn(["spec", "examples"], true));
  const examples = (Array.isArray(examplesSeq) ? examplesSeq : [])
    .filter((example): example is Record<string, unknown> => !!example && typeof example === "object")
    .map((example, i) => ({
      name: typeof example.name === "string" ? example.name : `example ${i + 1}`,
      description: typeof example.description === "string" ? example.description : undefined,
      input: (example.input ?? {}) as Record<string, unknown>,
    }));

  const meta = plain(doc.get("metadata")) as Record<string, unknown> | null;
  const keys = (section: string) => {
    const map = doc.getIn(["spec", section], true);
    return isMap(map) ? map.items.map((p) => (isScalar(p.key) ? str(p.key.value) : null)).filter((k): k is string => k !== null) : [];
  };
  return {
    name: meta && typeof meta === "object" ? str(meta.name) : null,
    version: meta && typeof meta === "object" ? str(meta.version) : null,
    definitions: { models: keys("models"), agents: keys("agents"), tools: keys("tools"), state: keys("state") },
    nodes,
    edges,
    examples,
    mcp: mcpUse(plain(doc.getIn(["spec", "tools"], true)), plain(doc.getIn(["spec", "agents"], true))),
    usesEnd: edges.some((e) => e.target === END),
  };
}

function mcpUse(tools: unknown, agents: unknown): McpUse {
  const entries = (value: unknown) => (value && typeof value === "object" && !Array.isArray(value) ? Object.entries(value) : []);
  const servers: Record<string, string> = {};
  for (const [name, tool] of entries(tools)) {
    const def = tool as Record<string, unknown> | null;
    if (def && def.kind === "mcp" && typeof def.server === "string") servers[name] = def.server;
  }
  const agentTools: Record<string, string[]> = {};
  for (const [name, agent] of entries(agents)) {
    const listed = (agent as Record<string, unknown> | null)?.tools;
    agentTools[name] = Array.isArray(listed) ? listed.map(String) : [];
  }
  return { servers, agentTools };
}

/** The node id a JSON pointer such as `/spec/nodes/<id>/prompt` is about, if any. */
export function nodeIdFromPointer(pointer: string | null | undefined): string | null {
  if (!pointer) return null;
  const parts = pointer
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (parts[0] === "spec" && parts[1] === "nodes" && parts[2] !== undefined) return parts[2];
  return null;
}

/** The index in `spec.edges` a pointer like `/spec/edges/3/...` names, if any. */
export function edgeIndexFromPointer(pointer: string | null | undefined): number | null {
  if (!pointer) return null;
  const m = /^\/spec\/edges\/(\d+)/.exec(pointer);
  return m ? Number(m[1]) : null;
}

/** 1-based line of the YAML node a JSON pointer names (the deepest existing part). */
export function lineOfPointer(text: string, pointer: string): number | null {
  return pointerLines(text)(pointer);
}

/** Parse `text` once and return a lookup of `lineOfPointer` for many pointers. */
export function pointerLines(text: string): (pointer: string) => number | null {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  return (pointer) => {
    const parts = pointer
      .split("/")
      .slice(1)
      .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
    let line: number | null = null;
    let current: unknown = doc.contents;
    for (const part of parts) {
      if (isMap(current)) {
        const pair = current.items.find((p) => isScalar(p.key) && String(p.key.value) === part);
        if (!pair) break;
        const key = pair.key as YamlNode;
        if (key.range) line = lineCounter.linePos(key.range[0]).line;
        current = pair.value;
      } else if (isSeq(current)) {
        const item = current.items[Number(part)] as YamlNode | undefined;
        if (!item) break;
        if (item.range) line = lineCounter.linePos(item.range[0]).line;
        current = item;
      } else break;
    }
    return line;
  };
}
