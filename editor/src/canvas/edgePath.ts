/**
 * SVG paths of elk's edge routes: the route's points joined by straight
 * segments with rounded corners, and the check that a stored route still
 * meets its edge's handles (after a drag it does not, and the edge falls back
 * to a step edge).
 */
import type { EdgeRoute, XY } from "../spec/layout";

/** How far (px) a route's end may be from its handle and still be drawn. */
export const ROUTE_TOLERANCE = 6;

/** Whether `route` starts at `source` and ends at `target` (within the tolerance). */
export function routeMeets(route: EdgeRoute, source: XY, target: XY, tolerance = ROUTE_TOLERANCE): boolean {
  const first = route.points[0];
  const last = route.points[route.points.length - 1];
  if (!first || !last || route.points.length < 2) return false;
  return Math.hypot(first.x - source.x, first.y - source.y) <= tolerance && Math.hypot(last.x - target.x, last.y - target.y) <= tolerance;
}

const fmt = (n: number) => String(Math.round(n * 10) / 10);

/**
 * The SVG path through `points`: straight segments, each corner rounded with
 * `radius` (less where a segment is too short for it); repeated points are
 * dropped.
 */
export function roundedPath(points: XY[], radius = 8): string {
  const pts = points.filter((p, i) => i === 0 || p.x !== points[i - 1].x || p.y !== points[i - 1].y);
  if (pts.length === 0) return "";
  const parts = [`M ${fmt(pts[0].x)} ${fmt(pts[0].y)}`];
  for (let i = 1; i < pts.length - 1; i++) {
    const [a, b, c] = [pts[i - 1], pts[i], pts[i + 1]];
    const inLength = Math.hypot(b.x - a.x, b.y - a.y);
    const outLength = Math.hypot(c.x - b.x, c.y - b.y);
    const r = Math.min(radius, inLength / 2, outLength / 2);
    const before = { x: b.x - ((b.x - a.x) / inLength) * r, y: b.y - ((b.y - a.y) / inLength) * r };
    const after = { x: b.x + ((c.x - b.x) / outLength) * r, y: b.y + ((c.y - b.y) / outLength) * r };
    parts.push(`L ${fmt(before.x)} ${fmt(before.y)}`, `Q ${fmt(b.x)} ${fmt(b.y)} ${fmt(after.x)} ${fmt(after.y)}`);
  }
  const end = pts[pts.length - 1];
  if (pts.length > 1) parts.push(`L ${fmt(end.x)} ${fmt(end.y)}`);
  return parts.join(" ");
}

/**
 * A route with its ends moved onto the handles (they may differ from elk's
 * port by a pixel or two), keeping its segments orthogonal.
 */
export function attachRoute(points: XY[], source: XY, target: XY): XY[] {
  if (points.length < 2) return [source, target];
  const out = points.map((p) => ({ ...p }));
  const n = out.length;
  out[0] = { ...source };
  out[n - 1] = { ...target };
  if (n > 2) {
    // The segment next to each end stays vertical (ports are on top and bottom sides).
    if (points[1].x === points[0].x) out[1] = { ...out[1], x: source.x };
    if (points[n - 2].x === points[n - 1].x) out[n - 2] = { ...out[n - 2], x: target.x };
  }
  return out;
}

/** Where a label goes on a route elk gave no label box: the middle of its longest segment. */
export function labelPoint(points: XY[]): XY {
  let best = { x: points[0]?.x ?? 0, y: points[0]?.y ?? 0 };
  let longest = -1;
  for (let i = 1; i < points.length; i++) {
    const [a, b] = [points[i - 1], points[i]];
    const d = Math.abs(b.x - a.x) + Math.abs(b.y - a.y);
    if (d > longest) [longest, best] = [d, { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 }];
  }
  return best;
}
