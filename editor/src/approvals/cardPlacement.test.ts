import { describe, expect, it } from "vitest";
import { cardRect, freeRects, placeCard, type Rect } from "./cardPlacement";

const rect = (left: number, top: number, right: number, bottom: number): Rect => ({ left, top, right, bottom });
const area = rect(0, 0, 800, 600);
const minimap = rect(580, 440, 790, 590);
const card = { width: 340, height: 300 };
const base = { card, area, obstacles: [minimap], gap: 10, margin: 8 };

describe("approval card placement", () => {
  it("keeps the card below its node when it fits there", () => {
    const placed = placeCard({ ...base, node: rect(100, 50, 300, 110) });
    expect(placed).toEqual({ side: "bottom", align: "center", zoom: 1, shift: { x: 0, y: 0 }, fits: true });
  });

  it("goes to the side with room instead of under the minimap or off the canvas", () => {
    // Near the bottom: below it would leave the canvas, above it fits.
    const low = placeCard({ ...base, node: rect(100, 480, 300, 540) });
    expect(low.side).toBe("top");
    expect(low.shift).toEqual({ x: 0, y: 0 });
    // At the right edge: below or right would leave the canvas; left has room, clear of the minimap.
    const right = placeCard({ ...base, node: rect(560, 200, 760, 260) });
    expect(right).toEqual({ side: "left", align: "center", zoom: 1, shift: { x: 0, y: 0 }, fits: true });
    const placed = cardRect(rect(560, 200, 760, 260), card, right.side, 10);
    expect(placed.right <= minimap.left || placed.bottom <= minimap.top).toBe(true);
  });

  it("pans the least when no side fits as it is", () => {
    const placed = placeCard({ ...base, area: rect(0, 0, 420, 600), obstacles: [], node: rect(200, 400, 400, 460) });
    expect(placed.fits).toBe(true);
    const box = cardRect(rect(200, 400, 400, 460), card, placed.side, 10, placed.align);
    const moved = { left: box.left + placed.shift.x, right: box.right + placed.shift.x, top: box.top + placed.shift.y, bottom: box.bottom + placed.shift.y };
    expect(moved.left).toBeGreaterThanOrEqual(8);
    expect(moved.right).toBeLessThanOrEqual(412);
    expect(moved.top).toBeGreaterThanOrEqual(8);
    expect(moved.bottom).toBeLessThanOrEqual(592);
  });

  it("splits the canvas around obstacles into maximal free rectangles", () => {
    const free = freeRects(area, [minimap]);
    expect(free).toContainEqual(rect(0, 0, 800, 440));
    expect(free).toContainEqual(rect(0, 0, 580, 600));
    expect(free.every((r) => !(r.left < minimap.right && minimap.left < r.right && r.top < minimap.bottom && minimap.top < r.bottom))).toBe(true);
  });

  it("does not hide another node of the graph when a side leaves it in sight", () => {
    const node = rect(200, 200, 400, 260);
    // A node right below: the bottom card would hide it; the right side fits as it is.
    const below = rect(200, 400, 400, 460);
    const placed = placeCard({ ...base, node, others: [below] });
    expect(placed).toMatchObject({ side: "right", zoom: 1, shift: { x: 0, y: 0 }, fits: true });
    const box = cardRect(node, card, placed.side, 10, placed.align);
    expect(box.left >= below.right || box.right <= below.left || box.top >= below.bottom || box.bottom <= below.top).toBe(true);
    // Nodes on every side: the least panning wins, bottom first.
    const all = [below, rect(420, 200, 620, 260), rect(0, 200, 180, 260), rect(200, 0, 400, 60)];
    expect(placeCard({ ...base, node, others: all }).side).toBe("bottom");
  });

  it("lays the card on no edge's label where a side, a place along it or a pan allows", () => {
    const node = rect(200, 200, 400, 260);
    // "approve | edit" just below the node: the card goes right, as it is.
    const label = rect(260, 290, 340, 306);
    expect(placeCard({ ...base, node, labels: [label] })).toEqual({ side: "right", align: "center", zoom: 1, shift: { x: 0, y: 0 }, fits: true });
    // Only the bottom fits without a pan: the view pans for the top rather than the card covering the label.
    const narrow = { ...base, area: rect(0, 0, 420, 900), obstacles: [] };
    const placed = placeCard({ ...narrow, node: rect(100, 100, 300, 160), labels: [rect(160, 190, 240, 206)] });
    expect(placed).toMatchObject({ side: "top", zoom: 1, fits: true });
    expect(placed.shift.y).toBeGreaterThan(0);
  });

  it("keeps to a side that needs no pan while the view is not to be panned", () => {
    // Nodes where the bottom and left cards go: the cheapest side needs a pan. As the person
    // moves the view (no pan allowed), the card goes where it is seen whole instead.
    const others = [rect(400, 300, 480, 316), rect(400, 400, 480, 416), rect(100, 100, 180, 116), rect(100, 250, 180, 266)];
    const input = { ...base, obstacles: [], node: rect(380, 150, 580, 210), others };
    const panned = placeCard(input);
    expect(panned.shift).not.toEqual({ x: 0, y: 0 });
    const still = placeCard({ ...input, canPan: false });
    expect(still.shift).toEqual({ x: 0, y: 0 });
    expect(still.fits).toBe(true);
  });

  it("does not pan another node off the canvas or under a control to keep a sliver of one in sight", () => {
    // The refund example at 1280x720 with the card's edit form open (measured in the editor):
    // left, the card covers the top 9 px of `refund`; right, a 175 px pan would push `refund`
    // past the canvas edge and under the zoom controls.
    const placed = placeCard({
      node: rect(523, 356, 697, 435),
      card: { width: 340, height: 314 },
      area: rect(128, 69, 880, 720),
      obstacles: [rect(715, 605, 865, 705), rect(143, 601, 169, 705), rect(820, 705, 880, 720)],
      others: [rect(523, 168, 697, 248), rect(298, 543, 472, 623), rect(523, 543, 697, 623), rect(580, 95, 640, 122), rect(580, 669, 640, 696)],
      gap: 10,
      margin: 8,
    });
    // Left, flush with the node's bottom: clear of `assess` above and `refund` below, no pan.
    expect(placed).toEqual({ side: "left", align: "end", zoom: 1, shift: { x: 0, y: 0 }, fits: true });
  });

  it("zooms out a little when no pan alone leaves every node and label in sight and uncovered", () => {
    // The refund example at 1280x720 (measured in the editor): left of `approve` lie the labels
    // `when ...`, `default` and `approve | edit`; right, a pan alone would push `refund` past the
    // canvas edge. Zoomed out a little about `approve`, the card fits right of it.
    const node = rect(527, 352, 707, 438);
    const others = [rect(527, 165, 707, 249), rect(303, 543, 480, 625), rect(528, 543, 705, 625), rect(587, 95, 647, 122), rect(587, 670, 647, 697)];
    const labels = [rect(410, 294, 611, 308), rect(342, 388, 386, 403), rect(475, 482, 554, 497), rect(574, 482, 611, 497)];
    const input = {
      node,
      card: { width: 340, height: 228 },
      area: rect(128, 69, 880, 720),
      obstacles: [rect(738, 608, 843, 700), rect(143, 601, 169, 705), rect(820, 705, 880, 720)],
      others,
      labels,
      gap: 10,
      margin: 8,
    };
    const placed = placeCard({ ...input, zoomOut: [0.95, 0.9, 0.85, 0.8] });
    expect(placed).toMatchObject({ side: "right", fits: true });
    expect(placed.zoom).toBeLessThan(1);
    expect(placed.zoom).toBeGreaterThanOrEqual(0.8);
    // Where the view puts everything: the card inside the canvas, on nothing, nothing pushed out.
    const c = { x: (node.left + node.right) / 2, y: (node.top + node.bottom) / 2 };
    const view = (r: Rect): Rect => ({
      left: c.x + (r.left - c.x) * placed.zoom + placed.shift.x,
      right: c.x + (r.right - c.x) * placed.zoom + placed.shift.x,
      top: c.y + (r.top - c.y) * placed.zoom + placed.shift.y,
      bottom: c.y + (r.bottom - c.y) * placed.zoom + placed.shift.y,
    });
    const box = cardRect(view(node), input.card, placed.side, 10, placed.align);
    const meets = (a: Rect, b: Rect) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    expect([...others, ...labels].map(view).filter((r) => meets(r, box))).toEqual([]);
    expect(box.left >= 136 && box.right <= 872 && box.top >= 77 && box.bottom <= 712).toBe(true);
    expect(others.map(view).every((r) => r.left >= 128 && r.right <= 880 && r.top >= 69 && r.bottom <= 720)).toBe(true);
    // Without zooming, a pan that cuts `refund` off beats lying on the labels.
    const panned = placeCard(input);
    expect(panned).toMatchObject({ side: "right", zoom: 1 });
  });
});
