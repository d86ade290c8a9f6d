/**
 * A route for an edge elk has not routed (added, or one of its nodes moved,
 * since the last layout): orthogonal, from the source's bottom handle to the
 * target's top handle, around the cards. Nothing moves: it only picks, among
 * a few step-shaped paths, the shortest that crosses no card.
 */
import type { XY } from "../spec/layout";

export interface Card {
  id: string;
  l: number;
  t: number;
  r: number;
  b: number;
}

/** Clearance kept between a detour and the cards (px). */
const CLEARANCE = 8;

/** Whether the axis-parallel segment a-b passes through `card` (grown by the clearance). */
function crosses(a: XY, b: XY, card: Card): boolean {
  return (
    Math.max(a.x, b.x) > card.l - CLEARANCE &&
    Math.min(a.x, b.x) < card.r + CLEARANCE &&
    Math.max(a.y, b.y) > card.t - CLEARANCE &&
    Math.min(a.y, b.y) < card.b + CLEARANCE
  );
}

function clear(points: XY[], cards: Card[], source: string, target: string): boolean {
  const last = points.length - 2;
  return points.every((p, i) => {
    if (i === 0) return true;
    const a = points[i - 1];
    // The first segment leaves the source's card, the last enters the target's.
    return cards.every((c) => (i === 1 && c.id === source) || (i - 1 === last && c.id === target) || !crosses(a, p, c));
  });
}

const length = (points: XY[]) => points.reduce((sum, p, i) => (i === 0 ? 0 : sum + Math.abs(p.x - points[i - 1].x) + Math.abs(p.y - points[i - 1].y)), 0);

/**
 * The shortest step path from `from` (a source's bottom handle) to `to` (a
 * target's top handle) that crosses none of `cards` (the edge's own two ends
 * only where it leaves and enters them), or null if none of the candidates
 * does. Candidates: one horizontal run at some height between the two (when
 * the target is below), or down, across to a free column, along it, and
 * across again above the target.
 */
export function detourRoute(from: XY, to: XY, cards: Card[], source: string, target: string, gap = 20): XY[] | null {
  const low = Math.min(from.y, to.y);
  const high = Math.max(from.y, to.y);
  // Only cards beside the edge's vertical span can be in the way of a column.
  const near = cards.filter((c) => c.b + gap >= low && c.t - gap <= high);
  const candidates: XY[][] = [];
  if (to.y - from.y >= 2 * gap) {
    const levels = new Set([(from.y + to.y) / 2, from.y + gap, to.y - gap]);
    for (const c of near) for (const y of [c.t - gap, c.b + gap]) if (y > from.y + CLEARANCE && y < to.y - CLEARANCE) levels.add(y);
    for (const y of levels) candidates.push([from, { x: from.x, y }, { x: to.x, y }, to]);
  }
  const columns = new Set([from.x, to.x]);
  for (const c of near) columns.add(c.l - gap).add(c.r + gap);
  const down = from.y + gap;
  const up = to.y - gap;
  for (const x of columns) candidates.push([from, { x: from.x, y: down }, { x, y: down }, { x, y: up }, { x: to.x, y: up }, to]);
  let best: XY[] | null = null;
  for (const points of candidates) if ((!best || length(points) < length(best)) && clear(points, cards, source, target)) best = points;
  return best;
}
