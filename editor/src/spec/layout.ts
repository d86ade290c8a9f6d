/**
 * Node placement and edge routes: elk's layered layout (run in a web worker,
 * bundled by Vite, no CDN) for "Auto layout" and for graphs without stored
 * positions, and a cheap placement for nodes added while editing, so existing
 * nodes never move unless the user asks.
 *
 * Every card has one fixed size (run output never grows it), so elk's boxes are
 * the boxes drawn. Each node has one input port at the middle of its top side
 * and one output port at the middle of its bottom side (where the canvas draws
 * its handles): elk routes edges orthogonally between those points, around the
 * cards, and places edge labels on the routes.
 */
import type { ElkExtendedEdge, ElkNode } from "elkjs/lib/elk-api";
import type { GraphEdge, GraphModel } from "./model";
import { EMPTY_MODEL, END, START } from "./model";

export interface XY {
  x: number;
  y: number;
}

/** The box of every spec node's card (the CSS of `.plait-node` uses the same size). */
export const NODE_SIZE = { width: 210, height: 96 };
export const TERMINAL_SIZE = { width: 72, height: 32 };

/** An edge as elk routed it: its points from the source's output to the target's input, and its label's box. */
export interface EdgeRoute {
  points: XY[];
  /** Who found it: elk's layout, or the canvas's detour for an edge elk did not route. */
  by?: "elk" | "detour";
  label?: { x: number; y: number; width: number; height: number };
}

export interface RoutedLayout {
  positions: Record<string, XY>;
  routes: Record<string, EdgeRoute>;
}

export const sizeOf = (id: string) => (id === START || id === END ? TERMINAL_SIZE : NODE_SIZE);

/** The ids the canvas draws: START, the spec's nodes, END. */
export function canvasNodeIds(model: GraphModel): string[] {
  return [START, ...model.nodes.map((n) => n.id), END];
}

const clip = (text: string, max = 40) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The label an edge shows: switch conditions as `when …`, route labels and `default` as they are. */
export function edgeLabelText(edge: GraphEdge): string | null {
  return edge.kind === "case" && edge.label ? `when ${clip(edge.label)}` : edge.label;
}

/**
 * The label each edge carries: edges sharing a source and target would draw
 * their labels on top of each other, so the first of such a group carries all
 * of them and the others none.
 */
export function edgeLabels(model: GraphModel): Record<string, string> {
  const groups = new Map<string, GraphEdge[]>();
  for (const e of model.edges) {
    const key = `${e.source}>${e.target}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const out: Record<string, string> = {};
  for (const group of groups.values()) {
    const texts = group.map(edgeLabelText).filter((t): t is string => !!t);
    if (texts.length > 0) out[group[0].id] = texts.join(" | ");
  }
  return out;
}

/** Roughly the size of an edge label as the canvas draws it (11 px bold, 4 px padding). */
export function labelSize(text: string): { width: number; height: number } {
  return { width: Math.ceil(text.length * 6.6) + 10, height: 18 };
}

/** The elk layout options: top to bottom, START first and END last, loops as back edges, orthogonal routes. */
export const LAYOUT_OPTIONS: Record<string, string> = {
  "elk.algorithm": "layered",
  "elk.direction": "DOWN",
  "elk.edgeRouting": "ORTHOGONAL",
  "elk.layered.spacing.nodeNodeBetweenLayers": "56",
  "elk.layered.spacing.edgeNodeBetweenLayers": "18",
  "elk.spacing.nodeNode": "48",
  "elk.spacing.edgeNode": "18",
  "elk.spacing.edgeEdge": "12",
  "elk.spacing.edgeLabel": "4",
  "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
  // The first node reached from START is laid out first, so a loop's edge back
  // to an earlier node is the one reversed (drawn upwards), not the way forward.
  "elk.layered.cycleBreaking.strategy": "DEPTH_FIRST",
  "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
  "elk.edgeLabels.placement": "CENTER",
  "elk.layered.edgeLabels.sideSelection": "ALWAYS_DOWN",
  "elk.padding": "[top=12,left=12,bottom=12,right=12]",
};

/** The elk graph of a model (top-to-bottom layered layout, ports where the canvas has its handles). */
export function toElkGraph(model: GraphModel): ElkNode {
  const ids = canvasNodeIds(model);
  const present = new Set(ids);
  const labels = edgeLabels(model);
  return {
    id: "root",
    layoutOptions: LAYOUT_OPTIONS,
    children: ids.map((id) => {
      const size = sizeOf(id);
      return {
        id,
        ...size,
        layoutOptions: {
          "elk.portConstraints": "FIXED_POS",
          ...(id === START ? { "elk.layered.layering.layerConstraint": "FIRST_SEPARATE" } : {}),
          ...(id === END ? { "elk.layered.layering.layerConstraint": "LAST_SEPARATE" } : {}),
        },
        ports: [
          { id: `${id}:in`, x: size.width / 2, y: 0, width: 0, height: 0, layoutOptions: { "elk.port.side": "NORTH" } },
          { id: `${id}:out`, x: size.width / 2, y: size.height, width: 0, height: 0, layoutOptions: { "elk.port.side": "SOUTH" } },
        ],
      };
    }),
    edges: model.edges
      .filter((e) => present.has(e.source) && present.has(e.target) && e.source !== e.target)
      .map((e): ElkExtendedEdge => {
        const label = labels[e.id];
        return {
          id: e.id,
          sources: [`${e.source}:out`],
          targets: [`${e.target}:in`],
          ...(label ? { labels: [{ id: `${e.id}:label`, text: label, ...labelSize(label) }] } : {}),
        };
      }),
  };
}

type Elk = { layout: (graph: ElkNode) => Promise<ElkNode> };
let elkPromise: Promise<Elk> | null = null;

/** One elk instance per page, its worker loaded from a bundled asset. */
function elk(): Promise<Elk> {
  elkPromise ??= Promise.all([import("elkjs/lib/elk-api.js"), import("elkjs/lib/elk-worker.min.js?url")]).then(
    ([api, worker]) => new api.default({ workerUrl: worker.default }) as unknown as Elk,
  );
  return elkPromise;
}

/**
 * Start elk's worker and lay out a small graph ahead of the first real layout:
 * the worker's script is large, and the browser compiles each of its functions
 * on first use, which made the first graph opened in a page ~1 s slower.
 */
export function warmUpLayout(): void {
  // A chain with switches that skip ahead and a loop back: the same ports, labels and back edges real graphs have.
  const ids = Array.from({ length: 24 }, (_, i) => `w${i}`);
  const edge = (id: string, source: string, target: string, kind: GraphEdge["kind"] = "static", label: string | null = null): GraphEdge => ({
    id,
    source,
    target,
    kind,
    label,
    edgeIndex: null,
    key: null,
  });
  const warm: GraphModel = {
    ...EMPTY_MODEL,
    nodes: ids.map((id) => ({ id, kind: "python", fields: {}, line: null, span: null })),
    edges: [
      edge("start", START, ids[0]),
      ...ids
        .slice(1)
        .flatMap((id, i) => [
          edge(`e${i}`, ids[i], id),
          ...(i % 3 === 0 && i + 3 < ids.length ? [edge(`s${i}`, ids[i], ids[i + 3], "case", "state.count > 3")] : []),
        ]),
      edge("loop", ids[ids.length - 1], ids[2], "route", "again"),
      edge("end", ids[ids.length - 1], END, "route", "done"),
    ],
  };
  void elk()
    .then((engine) => engine.layout(toElkGraph(warm)))
    .catch(() => undefined);
}

/** Positions and edge routes out of elk's result (all in the root's coordinates: the graph is flat). */
export function fromElkResult(result: ElkNode): RoutedLayout {
  const positions: Record<string, XY> = {};
  for (const child of result.children ?? []) positions[child.id] = { x: child.x ?? 0, y: child.y ?? 0 };
  const routes: Record<string, EdgeRoute> = {};
  for (const edge of (result.edges ?? []) as ElkExtendedEdge[]) {
    const section = edge.sections?.[0];
    if (!section) continue;
    const label = edge.labels?.[0];
    routes[edge.id] = {
      by: "elk",
      points: [section.startPoint, ...(section.bendPoints ?? []), section.endPoint].map((p) => ({ x: p.x, y: p.y })),
      ...(label && label.x !== undefined && label.y !== undefined
        ? { label: { x: label.x, y: label.y, width: label.width ?? 0, height: label.height ?? 0 } }
        : {}),
    };
  }
  return { positions, routes };
}

/** Lay out every node with elk (in the worker): positions and edge routes. */
export async function routedLayout(model: GraphModel): Promise<RoutedLayout> {
  return fromElkResult(await (await elk()).layout(toElkGraph(model)));
}

/** Lay out every node with elk (in the worker). */
export async function autoLayout(model: GraphModel): Promise<Record<string, XY>> {
  return (await routedLayout(model)).positions;
}

/**
 * Routes for positions that were stored (a saved layout): elk lays the graph
 * out again and its routes, moved by the offset between its START and the
 * stored one, are kept. The canvas draws a route only where it still meets
 * both ends' handles, so after a drag the edges of moved nodes fall back to a
 * plain step edge while the rest keep elk's routes.
 */
export async function routesFor(model: GraphModel, positions: Record<string, XY>): Promise<Record<string, EdgeRoute>> {
  const fresh = await routedLayout(model);
  const anchor = positions[START];
  const laid = fresh.positions[START];
  if (!anchor || !laid) return {};
  return shiftRoutes(fresh.routes, { x: anchor.x - laid.x, y: anchor.y - laid.y });
}

/** Routes moved by `offset`. */
export function shiftRoutes(routes: Record<string, EdgeRoute>, offset: XY): Record<string, EdgeRoute> {
  const move = (p: XY) => ({ x: p.x + offset.x, y: p.y + offset.y });
  return Object.fromEntries(
    Object.entries(routes).map(([id, r]) => [id, { ...r, points: r.points.map(move), ...(r.label ? { label: { ...r.label, ...move(r.label) } } : {}) }]),
  );
}

function overlaps(p: XY, id: string, placed: Record<string, XY>): boolean {
  const a = sizeOf(id);
  return Object.entries(placed).some(([other, q]) => {
    const b = sizeOf(other);
    return p.x < q.x + b.width + 20 && q.x < p.x + a.width + 20 && p.y < q.y + b.height + 20 && q.y < p.y + a.height + 20;
  });
}

/**
 * Positions for nodes that have none, keeping every existing position: a new
 * node goes below its first placed predecessor (or right of the graph), moved
 * right until it overlaps nothing. Returns only the new positions.
 */
export function placeNewNodes(model: GraphModel, positions: Record<string, XY>): Record<string, XY> {
  const placed: Record<string, XY> = {};
  for (const id of canvasNodeIds(model)) if (positions[id]) placed[id] = positions[id];
  const fresh: Record<string, XY> = {};
  const all = Object.values(placed);
  const maxX = all.length ? Math.max(...all.map((p) => p.x)) : 0;
  const minY = all.length ? Math.min(...all.map((p) => p.y)) : 0;
  for (const id of canvasNodeIds(model)) {
    if (placed[id]) continue;
    const parent = model.edges.find((e) => e.target === id && placed[e.source]);
    let p: XY = parent
      ? { x: placed[parent.source].x, y: placed[parent.source].y + sizeOf(parent.source).height + 70 }
      : { x: maxX + NODE_SIZE.width + 60, y: minY };
    while (overlaps(p, id, placed)) p = parent ? { x: p.x + NODE_SIZE.width + 40, y: p.y } : { x: p.x, y: p.y + NODE_SIZE.height + 40 };
    placed[id] = p;
    fresh[id] = p;
  }
  return fresh;
}

/**
 * Where a node dropped at `wanted` goes: there if it overlaps nothing in
 * `positions`, else the nearest free spot on rings of 40 px around it (so a
 * drop on top of a node lands beside it, not under it).
 */
export function placeNewNode(id: string, wanted: XY, positions: Record<string, XY>): XY {
  if (!overlaps(wanted, id, positions)) return wanted;
  const step = 40;
  for (let ring = 1; ring <= 30; ring++) {
    let best: XY | null = null;
    let bestDistance = Infinity;
    for (let dx = -ring; dx <= ring; dx++)
      for (let dy = -ring; dy <= ring; dy++) {
        if (Math.max(Math.abs(dx), Math.abs(dy)) !== ring) continue;
        const p = { x: wanted.x + dx * step, y: wanted.y + dy * step };
        const distance = Math.hypot(dx, dy);
        if (distance < bestDistance && !overlaps(p, id, positions)) [best, bestDistance] = [p, distance];
      }
    if (best) return best;
  }
  return wanted;
}
