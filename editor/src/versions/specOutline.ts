/**
 * The small part of a spec the run and version views need: node ids and kinds,
 * the edges between them (START/END included) and the examples. The full
 * YAML -> canvas model lives in spec/model.ts; this reads plain data only.
 */

import { parse } from "yaml";

export interface OutlineEdge {
  from: string;
  to: string;
  label: string | null;
}

export interface SpecExample {
  name: string;
  description?: string;
  input: Record<string, unknown>;
}

export interface SpecOutline {
  nodes: { id: string; kind: string }[];
  edges: OutlineEdge[];
  examples: SpecExample[];
}

type Plain = Record<string, unknown>;

/** Read the outline; a text that does not parse gives an empty outline. */
export function specOutline(text: string): SpecOutline {
  let data: unknown;
  try {
    data = parse(text);
  } catch {
    return { nodes: [], edges: [], examples: [] };
  }
  const spec = ((data as Plain | null)?.spec ?? {}) as Plain;
  const nodes = Object.entries((spec.nodes ?? {}) as Record<string, Plain | null>).map(([id, body]) => ({
    id,
    kind: typeof body?.kind === "string" ? body.kind : "unknown",
  }));
  const edges: OutlineEdge[] = [];
  for (const edge of (Array.isArray(spec.edges) ? spec.edges : []) as Plain[]) {
    const from = String(edge.from ?? "");
    if (typeof edge.to === "string" && !("route" in edge)) edges.push({ from, to: edge.to, label: null });
    if (Array.isArray(edge.switch))
      for (const branch of edge.switch as Plain[]) edges.push({ from, to: String(branch.to), label: String(branch.when ?? "") });
    if (edge.route !== undefined && edge.to && typeof edge.to === "object")
      for (const [label, to] of Object.entries(edge.to as Plain)) edges.push({ from, to: String(to), label });
    if (typeof edge.default === "string") edges.push({ from, to: edge.default, label: "default" });
  }
  const examples = (Array.isArray(spec.examples) ? spec.examples : [])
    .filter((example): example is Plain => !!example && typeof example === "object")
    .map((example, i) => ({
      name: typeof example.name === "string" ? example.name : `example ${i + 1}`,
      description: typeof example.description === "string" ? example.description : undefined,
      input: (example.input ?? {}) as Record<string, unknown>,
    }));
  return { nodes, edges, examples };
}
