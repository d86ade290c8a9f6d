/**
 * Where an approval card goes beside its node, in screen pixels: the side of
 * the node (bottom, right, left, top) and how far to pan the view so node
 * and card sit inside the canvas, clear of what floats over it (minimap,
 * controls, panes). The side that needs the least panning wins, bottom first
 * on a tie; what the card covers of the graph's other nodes, or what the pan pushes
 * of them under an obstacle or off the canvas (a node the pan cuts off at all counts
 * whole), costs as a long pan would (so a side that hides none wins unless it needs a
 * much longer pan); the edges' labels, which say where each decision leads, count the
 * same way at less; when node and card cannot both fit, the card alone must. While the
 * view is not to be panned, a side that needs no pan wins.
 */

export interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export type Side = "bottom" | "right" | "left" | "top";

export interface Placement {
  side: Side;
  /** Pan the view by this much (0, 0: it fits as it is). */
  shift: { x: number; y: number };
  /** False when nothing fits: the card is shown as well as it can be. */
  fits: boolean;
}

export interface PlacementInput {
  node: Rect;
  card: { width: number; height: number };
  /** The canvas on screen. */
  area: Rect;
  /** What covers parts of the canvas. */
  obstacles: Rect[];
  /** The graph's other nodes: neither the card nor the pan should hide them (the card pans with them). */
  others?: Rect[];
  /** The edges' labels: hiding one costs less than hiding a node (they pan with the nodes). */
  labels?: Rect[];
  /** Between node and card (the node toolbar's offset). */
  gap: number;
  /** Kept free along the edges of the area and around obstacles. */
  margin: number;
  /** False when the view will not be panned (it moves under the person's hand): a side
   * that needs a pan would leave the card partly out of sight, so one that needs none wins. */
  canPan?: boolean;
}

/** Order of preference, as a cost in pixels of panning. */
const SIDE_COST: Record<Side, number> = { bottom: 0, right: 24, left: 48, top: 72 };
/** Showing the card but not its whole node costs more than any pan. */
const NODE_CUT_COST = 1e6;
/** Hiding another node whole costs as much as a pan of this many pixels (part of it, part). */
const COVER_COST = 400;
/** Hiding an edge's label whole costs as much as a pan of this many pixels. */
const LABEL_COST = 150;

const width = (r: Rect) => r.right - r.left;
const height = (r: Rect) => r.bottom - r.top;
const intersects = (a: Rect, b: Rect) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
const contains = (outer: Rect, inner: Rect) => inner.left >= outer.left && inner.right <= outer.right && inner.top >= outer.top && inner.bottom <= outer.bottom;
const union = (a: Rect, b: Rect): Rect => ({
  left: Math.min(a.left, b.left),
  top: Math.min(a.top, b.top),
  right: Math.max(a.right, b.right),
  bottom: Math.max(a.bottom, b.bottom),
});
const grow = (r: Rect, by: number): Rect => ({ left: r.left - by, top: r.top - by, right: r.right + by, bottom: r.bottom + by });

/** The card's rectangle on `side` of `node` (centred on it, as a node toolbar aligns it). */
export function cardRect(node: Rect, card: { width: number; height: number }, side: Side, gap: number): Rect {
  const cx = (node.left + node.right) / 2;
  const cy = (node.top + node.bottom) / 2;
  const at = (left: number, top: number): Rect => ({ left, top, right: left + card.width, bottom: top + card.height });
  switch (side) {
    case "bottom":
      return at(cx - card.width / 2, node.bottom + gap);
    case "top":
      return at(cx - card.width / 2, node.top - gap - card.height);
    case "right":
      return at(node.right + gap, cy - card.height / 2);
    case "left":
      return at(node.left - gap - card.width, cy - card.height / 2);
  }
}

/** The largest rectangles of `area` that no obstacle touches (maximal empty rectangles). */
export function freeRects(area: Rect, obstacles: Rect[]): Rect[] {
  let free = [area];
  for (const obstacle of obstacles) {
    const next: Rect[] = [];
    for (const r of free) {
      if (!intersects(r, obstacle)) {
        next.push(r);
        continue;
      }
      const parts: Rect[] = [
        { ...r, bottom: obstacle.top },
        { ...r, top: obstacle.bottom },
        { ...r, right: obstacle.left },
        { ...r, left: obstacle.right },
      ];
      next.push(...parts.filter((p) => width(p) > 0 && height(p) > 0));
    }
    free = next.filter((r, i) => !next.some((other, j) => j !== i && contains(other, r) && (!contains(r, other) || j < i)));
  }
  return free;
}

/** The pan that moves `box` into `room` (0 on an axis where it already is inside). */
function shiftInto(box: Rect, room: Rect): { x: number; y: number } {
  const axis = (lo: number, hi: number, min: number, max: number) => (lo < min ? min - lo : hi > max ? max - hi : 0);
  return { x: axis(box.left, box.right, room.left, room.right), y: axis(box.top, box.bottom, room.top, room.bottom) };
}

/** The part of `r`'s area inside `clip` (0 when they do not meet). */
function overlap(r: Rect, clip: Rect): number {
  const w = Math.min(r.right, clip.right) - Math.max(r.left, clip.left);
  const h = Math.min(r.bottom, clip.bottom) - Math.max(r.top, clip.top);
  return w > 0 && h > 0 ? w * h : 0;
}

/**
 * How much of the other nodes (or labels) would be out of sight, in nodes (a half-hidden
 * node counts 0.5): under the card, under an obstacle or outside the canvas, once the view
 * pans by `shift`. One the pan takes partly out of sight, however little, counts whole: a
 * node cut off at the canvas edge or under a control looks broken, where the card laid
 * over a corner of one does not.
 */
function hidden(others: Rect[], card: Rect, area: Rect, obstacles: Rect[], shift: { x: number; y: number }): number {
  let total = 0;
  for (const other of others) {
    const r = { left: other.left + shift.x, right: other.right + shift.x, top: other.top + shift.y, bottom: other.bottom + shift.y };
    const size = width(r) * height(r);
    if (size <= 0) continue;
    const outOfSight = (box: Rect) => size - overlap(box, area) + obstacles.reduce((sum, o) => sum + overlap(box, o), 0);
    const after = outOfSight(r);
    const pushed = after > 0 && outOfSight(other) === 0 ? size : after;
    total += Math.min(1, (pushed + overlap(other, card)) / size);
  }
  return total;
}

/** Decide the card's side and the pan that shows it (see the module comment). */
export function placeCard({ node, card, area, obstacles, others = [], labels = [], gap, margin, canPan = true }: PlacementInput): Placement {
  const rooms = freeRects(
    grow(area, -margin),
    obstacles.map((o) => grow(o, margin)),
  );
  let best: (Placement & { cost: number }) | null = null;
  for (const side of Object.keys(SIDE_COST) as Side[]) {
    const placed = cardRect(node, card, side, gap);
    for (const [box, extra] of [
      [union(node, placed), 0],
      [placed, NODE_CUT_COST],
    ] as const) {
      for (const room of rooms) {
        if (width(box) > width(room) || height(box) > height(room)) continue;
        const shift = shiftInto(box, room);
        const hiding = COVER_COST * hidden(others, placed, area, obstacles, shift) + LABEL_COST * hidden(labels, placed, area, obstacles, shift);
        const unpanned = !canPan && (shift.x !== 0 || shift.y !== 0) ? NODE_CUT_COST : 0;
        const cost = Math.abs(shift.x) + Math.abs(shift.y) + SIDE_COST[side] + hiding + extra + unpanned;
        if (!best || cost < best.cost) best = { side, shift, fits: true, cost };
      }
    }
  }
  if (best) return { side: best.side, shift: best.shift, fits: true };
  // Too small for the card anywhere: at least its top-left corner (title, buttons start) in view.
  const placed = cardRect(node, card, "bottom", gap);
  const inner = grow(area, -margin);
  return {
    side: "bottom",
    shift: { x: Math.max(inner.left - placed.left, Math.min(0, inner.right - placed.right)), y: inner.top - placed.top },
    fits: false,
  };
}
