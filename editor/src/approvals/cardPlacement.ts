/**
 * Where an approval card goes beside its node, in screen pixels: the side of
 * the node (bottom, right, left, top), where along that side (centred, or
 * flush with one end of the node), and how far to pan the view, and zoom it
 * out, so node and card sit inside the canvas, clear of what floats over it
 * (minimap, controls, panes). What is worst is the card lying on the graph:
 * another node or an edge's label (which says where each decision leads) it
 * touches at all costs more than any pan or zoom, so a placement that covers
 * nothing wins whenever one exists. Then what the pan or zoom pushes of the
 * other nodes or labels under an obstacle or off the canvas (a node cut off
 * at all counts whole); then zooming out (a little, and only as far as the
 * caller allows); then the length of the pan, bottom first and centred on a
 * tie. When node and card cannot both fit, the card alone must. While the
 * view is not to be panned, a placement that needs no pan or zoom wins.
 */

export interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export type Side = "bottom" | "right" | "left" | "top";
/** Along the side: flush with the node's start (left or top), centred, or flush with its end. */
export type Align = "start" | "center" | "end";

export interface Placement {
  side: Side;
  align: Align;
  /** Zoom the view by this factor about the node's centre first (1: as it is). */
  zoom: number;
  /** Then pan the view by this much (0, 0: it fits as it is). */
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
  /** Factors the view may be zoomed out by about the node's centre, each below 1 (none: never). */
  zoomOut?: number[];
}

/** Order of preference, as a cost in pixels of panning. */
const SIDE_COST: Record<Side, number> = { bottom: 0, right: 24, left: 48, top: 72 };
const ALIGN_COST: Record<Align, number> = { center: 0, start: 16, end: 16 };
/** Showing the card but not its whole node costs more than any pan. */
const NODE_CUT_COST = 1e6;
/** The card lying on another node, or on an edge's label, at all: more than any pan or zoom. */
const COVER_NODE_COST = 20000;
const COVER_LABEL_COST = 10000;
/** The pan hiding another node whole costs as much as a pan of this many pixels (part of it, part). */
const PUSH_NODE_COST = 400;
/** The pan hiding an edge's label whole costs as much as a pan of this many pixels. */
const PUSH_LABEL_COST = 150;
/** Zooming out by a factor f costs as much as a pan of (1 - f) times this many pixels. */
const ZOOM_COST = 1500;
/** A pan shorter than this, or a zoom closer to 1, is none (the view's own rounding). */
const STILL = 0.5;

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

/** The card's rectangle on `side` of `node`, placed along it as a node toolbar with `align` places it. */
export function cardRect(node: Rect, card: { width: number; height: number }, side: Side, gap: number, align: Align = "center"): Rect {
  const along = { start: 0, center: 0.5, end: 1 }[align];
  // The card's own point at that fraction of it meets the node's point at that fraction of the side.
  const cx = node.left + width(node) * along + card.width * (0.5 - along);
  const cy = node.top + height(node) * along + card.height * (0.5 - along);
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
 * How much of the other nodes (or labels) the pan by `shift` takes out of sight, in nodes
 * (a half-hidden node counts 0.5): under an obstacle or outside the canvas. One the pan
 * takes partly out of sight, however little, counts whole: a node cut off at the canvas
 * edge or under a control looks broken.
 */
function pushed(others: Rect[], area: Rect, obstacles: Rect[], shift: { x: number; y: number }, before: Rect[]): number {
  let total = 0;
  others.forEach((other, i) => {
    const r = moved(other, shift);
    const size = width(r) * height(r);
    if (size <= 0) return;
    const outOfSight = (box: Rect) => width(box) * height(box) - overlap(box, area) + obstacles.reduce((sum, o) => sum + overlap(box, o), 0);
    const after = outOfSight(r);
    const was = outOfSight(before[i]);
    total += Math.min(1, after > 0.5 && was <= 0.5 ? 1 : after / size);
  });
  return total;
}

/** How many of `others` the card touches (a sliver counts: it lies on them). */
const covered = (others: Rect[], card: Rect) => others.filter((other) => overlap(other, card) > 1).length;

const moved = (r: Rect, by: { x: number; y: number }): Rect => ({ left: r.left + by.x, right: r.right + by.x, top: r.top + by.y, bottom: r.bottom + by.y });

/** `r` as the view zoomed by `f` about the point `c` shows it. */
const scaled = (r: Rect, f: number, c: { x: number; y: number }): Rect =>
  f === 1 ? r : { left: c.x + (r.left - c.x) * f, right: c.x + (r.right - c.x) * f, top: c.y + (r.top - c.y) * f, bottom: c.y + (r.bottom - c.y) * f };

/** Decide the card's side, its place along it and the pan (and zoom) that shows it (see the module comment). */
export function placeCard({ node, card, area, obstacles, others = [], labels = [], gap, margin, canPan = true, zoomOut = [] }: PlacementInput): Placement {
  const rooms = freeRects(
    grow(area, -margin),
    obstacles.map((o) => grow(o, margin)),
  );
  const centre = { x: (node.left + node.right) / 2, y: (node.top + node.bottom) / 2 };
  let best: (Placement & { cost: number }) | null = null;
  for (const zoom of [1, ...zoomOut.filter((f) => f > 0 && f < 1)]) {
    const zoomedNode = scaled(node, zoom, centre);
    const zoomedOthers = others.map((o) => scaled(o, zoom, centre));
    const zoomedLabels = labels.map((l) => scaled(l, zoom, centre));
    for (const side of Object.keys(SIDE_COST) as Side[]) {
      for (const align of Object.keys(ALIGN_COST) as Align[]) {
        const placed = cardRect(zoomedNode, card, side, gap, align);
        // Where it lies on the graph does not change with the pan: the card pans with it.
        const lying = COVER_NODE_COST * covered(zoomedOthers, placed) + COVER_LABEL_COST * covered(zoomedLabels, placed);
        for (const [box, extra] of [
          [union(zoomedNode, placed), 0],
          [placed, NODE_CUT_COST],
        ] as const) {
          for (const room of rooms) {
            if (width(box) > width(room) || height(box) > height(room)) continue;
            const found = shiftInto(box, room);
            const shift = { x: Math.abs(found.x) < STILL ? 0 : found.x, y: Math.abs(found.y) < STILL ? 0 : found.y };
            const hiding =
              PUSH_NODE_COST * pushed(zoomedOthers, area, obstacles, shift, others) + PUSH_LABEL_COST * pushed(zoomedLabels, area, obstacles, shift, labels);
            const still = shift.x === 0 && shift.y === 0 && zoom === 1;
            const unpanned = !canPan && !still ? NODE_CUT_COST : 0;
            const cost =
              Math.abs(shift.x) + Math.abs(shift.y) + SIDE_COST[side] + ALIGN_COST[align] + ZOOM_COST * (1 - zoom) + lying + hiding + extra + unpanned;
            if (!best || cost < best.cost) best = { side, align, zoom, shift, fits: true, cost };
          }
        }
      }
    }
  }
  if (best) return { side: best.side, align: best.align, zoom: best.zoom, shift: best.shift, fits: true };
  // Too small for the card anywhere: at least its top-left corner (title, buttons start) in view.
  const placed = cardRect(node, card, "bottom", gap);
  const inner = grow(area, -margin);
  return {
    side: "bottom",
    align: "center",
    zoom: 1,
    shift: { x: Math.max(inner.left - placed.left, Math.min(0, inner.right - placed.right)), y: inner.top - placed.top },
    fits: false,
  };
}
