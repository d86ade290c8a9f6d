/**
 * Node positions from the layout sidecar (`graphs.layout` / `graphs.saveLayout`
 * in the API client). A server without the endpoint, or any failure to read
 * it, just means "no stored positions": the canvas lays the graph out itself.
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

/** Store positions, rounded to whole pixels (the file stays small and diff-friendly). */
export function saveLayout(name: string, positions: Record<string, XY>): Promise<void> {
  const rounded = Object.fromEntries(Object.entries(positions).map(([id, p]) => [id, { x: Math.round(p.x), y: Math.round(p.y) }]));
  return graphs.saveLayout(name, rounded);
}
