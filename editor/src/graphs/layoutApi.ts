/**
 * Node positions from the layout sidecar (`graphs.layout` in the API client).
 * A server without the endpoint, or any failure to read it, just means "no
 * stored positions": the canvas lays the graph out itself. Positions are
 * written only with a Save (`layoutForSave` goes in the upload), never while
 * editing, so nothing lands in the checkout before then (decision 38).
 */
import { graphs } from "../api/client";
import type { XY } from "../spec/layout";

export async function loadLayout(name: string): Promise<Record<string, XY>> {
  let body: unknown;
  try {
    body = await graphs.layout(name);
  } catch {
    return {};
  }
  const out: Record<string, XY> = {};
  if (body && typeof body === "object") {
    for (const [id, p] of Object.entries(body as Record<string, unknown>)) {
      const pos = p as { x?: unknown; y?: unknown } | null;
      if (pos && typeof pos.x === "number" && typeof pos.y === "number") out[id] = { x: pos.x, y: pos.y };
    }
  }
  return out;
}

/** Positions to save, rounded to whole pixels (the file stays small and diff-friendly). */
export function layoutForSave(positions: Record<string, XY>): Record<string, XY> {
  return Object.fromEntries(Object.entries(positions).map(([id, p]) => [id, { x: Math.round(p.x), y: Math.round(p.y) }]));
}
