/**
 * Node placement: elk's layered layout (run in a web worker, bundled by Vite,
 * no CDN) for "Auto layout" and for graphs without stored positions, and a
 * cheap placement for nodes added while editing, so existing nodes never move
 * unless the user asks.
 */
import type { ElkNode } from "elkjs/lib/elk-api";
import type { GraphModel } from "./model";
import { EMPTY_MODEL, END, START } from "./model";

export interface XY {
  x: number;
  y: number;
}

export const NODE_SIZE = { width: 210, height: 76 };
export const TERMINAL_SIZE = { width: 72, height: 32 };

const sizeOf = (id: string) => (id === START || id === END ? TERMINAL_SIZE : NODE_SIZE);

/** The ids the canvas draws: START, the spec's nodes, END. */
export function canvasNodeIds(model: GraphModel): string[] {
  return [START, ...model.nodes.map((n) => n.id), END];
}

/** The elk graph of a model (top-to-bottom layered layout). */
export function toElkGraph(model: GraphModel): ElkNode {
  const ids = new Set(canvasNodeIds(model));
  return {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "DOWN",
      "elk.layered.spacing.nodeNodeBetweenLayers": "70",
      "elk.spacing.nodeNode": "50",
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
      "elk.edgeRouting": "SPLINES",
    },
    children: [...ids].map((id) => ({ id, ...sizeOf(id) })),
    edges: model.edges
      .filter((e) => ids.has(e.source) && ids.has(e.target) && e.source !== e.target)
      .map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
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
  const ids = Array.from({ length: 24 }, (_, i) => `w${i}`);
  const warm: ElkNode = {
    id: "warm-up",
    layoutOptions: toElkGraph(EMPTY_MODEL).layoutOptions,
    children: ids.map((id) => ({ id, ...NODE_SIZE })),
    edges: ids.slice(1).flatMap((id, i) => [
      { id: `e${i}`, sources: [ids[i]], targets: [id] },
      ...(i % 3 === 0 && i + 3 < ids.length ? [{ id: `s${i}`, sources: [ids[i]], targets: [ids[i + 3]] }] : []),
    ]),
  };
  void elk()
    .then((engine) => engine.layout(warm))
    .catch(() => undefined);
}

/** Lay out every node with elk (in the worker). */
export async function autoLayout(model: GraphModel): Promise<Record<string, XY>> {
  const result = await (await elk()).layout(toElkGraph(model));
  const positions: Record<string, XY> = {};
  for (const child of result.children ?? []) positions[child.id] = { x: child.x ?? 0, y: child.y ?? 0 };
  return positions;
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
