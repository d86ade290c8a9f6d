import { describe, expect, it } from "vitest";
import { detourRoute, type Card } from "./detour";

const card = (id: string, x: number, y: number): Card => ({ id, l: x, t: y, r: x + 200, b: y + 90 });

describe("detour routes", () => {
  it("goes straight down when nothing is in the way", () => {
    const cards = [card("a", 0, 0), card("b", 0, 300)];
    expect(detourRoute({ x: 100, y: 90 }, { x: 100, y: 300 }, cards, "a", "b")).toEqual([
      { x: 100, y: 90 },
      { x: 100, y: 195 },
      { x: 100, y: 195 },
      { x: 100, y: 300 },
    ]);
  });

  it("runs beside a card that sits between source and target", () => {
    const cards = [card("a", 0, 0), card("mid", 0, 150), card("b", 0, 300)];
    const route = detourRoute({ x: 100, y: 90 }, { x: 100, y: 300 }, cards, "a", "b")!;
    expect(route).not.toBeNull();
    const column = route[2].x;
    expect(column < 0 - 8 || column > 200 + 8).toBe(true);
    expect(route[route.length - 1]).toEqual({ x: 100, y: 300 });
  });

  it("goes round the cards to a target above", () => {
    const cards = [card("a", 0, 0), card("b", 0, 300)];
    const route = detourRoute({ x: 100, y: 390 }, { x: 100, y: 0 }, cards, "b", "a")!;
    expect(route.length).toBe(6);
    expect(route[1].y).toBeGreaterThan(390);
    expect(route[4].y).toBeLessThan(0);
    expect(route[2].x < -8 || route[2].x > 208).toBe(true);
  });
});
