/**
 * Node positions: a sidecar per graph (`GET/PUT /graphs/{name}/layout`,
 * `{node_id: {x, y}}`), outside the spec so they never change its digest.
 * A server without the endpoint (404) just means "no stored positions".
 */
import type { XY } from "../store/editorStore";

const path = (name: string) => `/graphs/${encodeURIComponent(name)}/layout`;

export async function loadLayout(name: string): Promise<Record<string, XY>> {
  try {
    const response = await fetch(path(name), { headers: { Accept: "application/json" } });
    if (!response.ok) return {};
    const body: unknown = await response.json();
    const out: Record<string, XY> = {};
    if (body && typeof body === "object") {
      for (const [id, p] of Object.entries(body as Record<string, unknown>)) {
        const pos = p as { x?: unknown; y?: unknown } | null;
        if (pos && typeof pos.x === "number" && typeof pos.y === "number") out[id] = { x: pos.x, y: pos.y };
      }
    }
    return out;
  } catch {
    return {};
  }
}

export async function saveLayout(name: string, positions: Record<string, XY>): Promise<void> {
  const rounded = Object.fromEntries(Object.entries(positions).map(([id, p]) => [id, { x: Math.round(p.x), y: Math.round(p.y) }]));
  await fetch(path(name), { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify(rounded) });
}
